/**
 * Upload a built export and switch to it. The order makes a failure harmless: every file goes up
 * under `exports/<version>/`, then the version's own manifest, and only then `exports/manifest.json`
 * is replaced (one PUT, atomic in S3). Until that last step, readers keep the previous version.
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
import type { BuiltFile } from './build/files.ts';
import type { BuiltRunnerFile } from './build/runner-files.ts';

export interface PublishInput {
  readonly version: string;
  readonly builtAt: Date;
  readonly tables: Manifest['tables'];
  readonly files: readonly BuiltFile[];
  /** The runners' index and page files (`build/runner-files.ts`), listed apart from the export files. */
  readonly runnerFiles?: readonly BuiltRunnerFile[];
}

/** Uploads one built file under the version's prefix and describes it for the manifest. */
async function upload<T extends BuiltFile | BuiltRunnerFile>(store: ObjectStore, version: string, built: T): Promise<Omit<T, 'path'> & { key: string; etag: string }> {
  const key = `${versionPrefix(version)}${built.name}`;
  const info = await store.putFile(key, built.path, { contentType: built.content_type });
  if (info.size !== built.size) throw new Error(`upload of ${key} stored ${info.size} bytes, expected ${built.size}`);
  const { path: _path, ...described } = built;
  return { ...described, key, etag: info.etag };
}

export async function publish(
  store: ObjectStore,
  input: PublishInput,
  onUploaded: (file: ExportFile) => void = () => {},
): Promise<Manifest> {
  const files: ExportFile[] = [];
  const runnerFiles: RunnerFile[] = [];
  try {
    for (const built of input.files) {
      const file = await upload(store, input.version, built);
      files.push(file);
      onUploaded(file);
    }
    for (const built of input.runnerFiles ?? []) runnerFiles.push(await upload(store, input.version, built));
    const manifest = manifestSchema.parse({
      version: input.version,
      built_at: input.builtAt.toISOString(),
      tables: input.tables,
      files,
      ...(runnerFiles.length > 0 ? { runner_files: runnerFiles } : {}),
    });
    const body = JSON.stringify(manifest, null, 2);
    await store.putBytes(versionManifestKey(input.version), body, { contentType: 'application/json' });
    await store.putBytes(MANIFEST_KEY, body, { contentType: 'application/json' });
    return manifest;
  } catch (error) {
    // Best effort: leave no half-written version behind. A leftover is also pruned by the next run.
    await removeVersion(store, input.version).catch(() => {});
    throw error;
  }
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

async function removeVersion(store: ObjectStore, version: string): Promise<void> {
  const objects = await store.list(versionPrefix(version));
  await store.delete(objects.map((o) => o.key));
}
