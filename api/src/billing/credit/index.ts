/** The credit owner's door (`credit.ts`): the rest of billing calls `Credit`, never its parts. */
export { Credit, type CreditOptions } from './credit.ts';
export { insufficientCredit } from './balances.ts';
