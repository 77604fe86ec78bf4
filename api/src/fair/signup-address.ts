/**
 * The sign-up address as accounts keep it (DECISIONS §4 Fair shares): a peppered HMAC of `req.ip`,
 * so the accounts table can group accounts by address without holding the addresses. An address
 * is compared, never shown.
 */
import { createHmac } from 'node:crypto';

export function signupAddressHasher(pepper: string): (address: string) => string {
  return (address) => createHmac('sha256', pepper).update(`signup-address:${address}`).digest('hex').slice(0, 32);
}
