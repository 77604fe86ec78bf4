/**
 * Upload a built export and switch to it. The order makes a failure harmless: every file goes up
 * under `exports/<version>/` (while the build is still running: nothing reads a version until a
 * manifest names it), then the version's own manifest, and only then `exports/manifest.json` is
 * replaced (one PUT, atomic in S3). Until that last step, readers keep the previous version.
 */
import {
  EXPORTS_PREFIX,
  MANIFEST_KEY,
  VERSION_PATTERN,
  manifestSchema,
  versionManifestKey,
  versionPrefix,
  type ExportFile,
  type Manifest,
  type RunnerFile,
} from '@uda/shared/manifest';
import type { ObjectStore } from '@uda/shared/object-store';

/** A file on the build's disk, ready to go up under the version's prefix. */
export interface LocalFile {
  readonly name: string;
  readonly path: string;
  readonly size: number;
  readonly content_type: string;
}

/**
 * Uploads at once: enough to hide an S3 round trip behind another file's transfer (the S3 store
 * sends up to 4 parts of a large file at once), few enough that the build, which runs meanwhile,
 * keeps the cores and libuv's threads.
 */
export const UPLOAD_CONCURRENCY = 2;

export interface Uploaded {
  readonly key: string;
  readonly etag: string;
}

/** A version's files going up while the build runs. */
export interface VersionUploads {
  /** Queues the file's upload; resolves with its key and ETag once it is stored whole. */
  upload(file: LocalFile): Promise<Uploaded>;
  /** Throws the first failed upload's error, so the build stops at its next check instead of finishing in vain. */
  check(): void;
  /** Starts no more uploads and resolves once none is running, so the version can be removed after a failure. */
  stop(): Promise<void>;
}

export function versionUploads(store: ObjectStore, version: string, onUploaded: (key: string) => void = () => {}): VersionUploads {
  let failure: { error: unknown } | undefined;
  let stopped = false;
  const started = new Set<Promise<unknown>>();
  const run = limiter(UPLOAD_CONCURRENCY);
  const put = async (file: LocalFile): Promise<Uploaded> => {
    if (stopped) throw new Error('export failed before this file was uploaded');
    const key = `${versionPrefix(version)}${file.name}`;
    const info = await store.putFile(key, file.path, { contentType: file.content_type });
    if (info.size !== file.size) throw new Error(`upload of ${key} stored ${info.size} bytes, expected ${file.size}`);
    onUploaded(key);
    return { key, etag: info.etag };
  };
  return {
    upload(file) {
      const uploaded = run(() => put(file));
      started.add(uploaded);
      uploaded.catch((error: unknown) => (failure ??= { error })).finally(() => started.delete(uploaded));
      return uploaded;
    },
    check() {
      if (failure) throw failure.error;
    },
    async stop() {
      stopped = true;
      await Promise.allSettled([...started]);
    },
  };
}

/** Runs at most `concurrency` tasks at once, the others in the order they came. */
function limiter(concurrency: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (running >= concurrency) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await task();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

export interface SwitchInput {
  readonly version: string;
  readonly builtAt: Date;
  readonly tables: Manifest['tables'];
  /** Every file of the version, already uploaded. */
  readonly files: readonly ExportFile[];
  /** The runners' index and page files (`build/runner-files.ts`), listed apart from the export files. */
  readonly runnerFiles?: readonly RunnerFile[];
}

/** Writes the version's manifest, then replaces `exports/manifest.json`: the switch readers follow. */
export async function switchManifest(store: ObjectStore, input: SwitchInput): Promise<Manifest> {
  const manifest = manifestSchema.parse({
    version: input.version,
    built_at: input.builtAt.toISOString(),
    tables: input.tables,
    files: input.files,
    ...(input.runnerFiles?.length ? { runner_files: input.runnerFiles } : {}),
  });
  const body = JSON.stringify(manifest, null, 2);
  await store.putBytes(versionManifestKey(input.version), body, { contentType: 'application/json' });
  await store.putBytes(MANIFEST_KEY, body, { contentType: 'application/json' });
  return manifest;
}

export async function readCurrentManifest(store: ObjectStore): Promise<Manifest | undefined> {
  const object = await store.get(MANIFEST_KEY);
  if (!object) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of object.body) chunks.push(chunk as Buffer);
  return manifestSchema.parse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
}

/**
 * Keeps the newest `keep` complete versions (those with their own manifest) and removes older
 * ones and any incomplete leftovers of failed builds. The current version is never removed.
 */
export async function pruneVersions(store: ObjectStore, current: string, keep: number): Promise<string[]> {
  const objects = await store.list(EXPORTS_PREFIX);
  const keysByVersion = new Map<string, string[]>();
  for (const { key } of objects) {
    const version = key.slice(EXPORTS_PREFIX.length).split('/')[0] ?? '';
    if (!VERSION_PATTERN.test(version)) continue;
    keysByVersion.set(version, [...(keysByVersion.get(version) ?? []), key]);
  }
  const complete = [...keysByVersion.keys()]
    .filter((v) => keysByVersion.get(v)!.includes(versionManifestKey(v)))
    .sort()
    .reverse();
  const kept = new Set([current, ...complete.filter((v) => v <= current).slice(0, keep)]);
  const removed = [...keysByVersion.keys()].filter((v) => !kept.has(v) && v < current);
  await store.delete(removed.flatMap((v) => keysByVersion.get(v)!));
  return removed.sort();
}

/** Removes a version that was never switched to; a leftover is also pruned by the next run. */
export async function removeVersion(store: ObjectStore, version: string): Promise<void> {
  const objects = await store.list(versionPrefix(version));
  await store.delete(objects.map((o) => o.key));
}
