export default async function globalTeardown(): Promise<void> {
  await globalThis.__S3RVER__?.close();
}
