/**
 * The one error an ingestion raises for a problem with the user's file. Its message is shown to the
 * user as the sheet's `error`, so it never carries a path or engine text. Anything else thrown
 * during ingestion is ours (disk, object store, a bug) and the job is retried.
 */
export class SheetIngestError extends Error {
  override readonly name = 'SheetIngestError';
}

export function megabytes(bytes: number): string {
  return `${Math.round(bytes / (1024 * 1024))} MB`;
}
