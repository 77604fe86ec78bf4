/**
 * A local folder as the object store, for the embedded default (`npm start`). Writes go to a
 * temporary file and are renamed into place, so a reader never sees a partial object.
 */
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ByteRange, ObjectBody, ObjectInfo, ObjectStore, PutOptions } from './types.ts';
import { ObjectStoreError } from './types.ts';

export class LocalFolderStore implements ObjectStore {
  readonly description: string;
  private readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
    this.description = `local folder ${this.root}`;
  }

  async putFile(key: string, path: string, _options?: PutOptions): Promise<ObjectInfo> {
    return this.writeAtomically(key, (tmp) => copyFile(path, tmp));
  }

  async putBytes(key: string, bytes: Uint8Array | string, _options?: PutOptions): Promise<ObjectInfo> {
    return this.writeAtomically(key, (tmp) => writeFile(tmp, bytes));
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const path = this.pathOf(key);
    try {
      const info = await stat(path);
      return info.isFile() ? toInfo(key, info.size, info.mtime) : undefined;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async get(key: string, range?: ByteRange): Promise<ObjectBody | undefined> {
    const info = await this.head(key);
    if (!info) return undefined;
    const body = createReadStream(this.pathOf(key), range ? { start: range.start, end: range.end } : {});
    return range ? { ...info, body, range } : { ...info, body };
  }

  async list(prefix: string): Promise<ObjectInfo[]> {
    const found: ObjectInfo[] = [];
    const walk = async (dir: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (error) {
        if (isNotFound(error)) return;
        throw error;
      }
      for (const entry of entries) {
        const full = join(dir, entry.name);
        if (entry.isDirectory()) await walk(full);
        else if (entry.isFile() && !entry.name.startsWith('.tmp-')) {
          const key = relative(this.root, full).split(sep).join('/');
          if (key.startsWith(prefix)) {
            const info = await stat(full);
            found.push(toInfo(key, info.size, info.mtime));
          }
        }
      }
    };
    await walk(this.root);
    return found.sort((a, b) => a.key.localeCompare(b.key));
  }

  async delete(keys: readonly string[]): Promise<void> {
    await Promise.all(keys.map((key) => rm(this.pathOf(key), { force: true })));
  }

  private async writeAtomically(key: string, write: (tmp: string) => Promise<void>): Promise<ObjectInfo> {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    const tmp = join(dirname(path), `.tmp-${randomUUID()}`);
    try {
      await write(tmp);
      await rename(tmp, path);
    } catch (error) {
      await rm(tmp, { force: true });
      throw error;
    }
    const info = await this.head(key);
    if (!info) throw new ObjectStoreError(`object ${key} vanished after write`);
    return info;
  }

  /** Keys are relative paths; anything that would leave the root is refused. */
  private pathOf(key: string): string {
    const path = resolve(this.root, key);
    if (!path.startsWith(this.root + sep)) throw new ObjectStoreError(`invalid object key: ${key}`);
    return path;
  }
}

/** A strong ETag from size and modification time, as static file servers do: objects are immutable. */
function toInfo(key: string, size: number, mtime: Date): ObjectInfo {
  const etag = `"${size.toString(16)}-${Math.floor(mtime.getTime()).toString(16)}"`;
  return { key, size, etag, lastModified: mtime };
}

function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}
