/**
 * Compares two builds' runner files: every index array of every source exactly, and each
 * document's page rows (the page files' row order may differ between builds: the page SQL has no
 * ORDER BY, so a document's row is found by its offsets). Exits 1 on any difference.
 *
 *   node exporter/bench/compare-runner-files.ts <runner dir A> <runner dir B>
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { INDEX_FILE_NAME, pagesFileName, readIndexFile } from '@uda/search/index';
import type { PageOffsets } from '@uda/search/index';

const [a, b] = process.argv.slice(2) as [string, string];
const [filesA, filesB] = [await readIndexFile(join(a, INDEX_FILE_NAME)), await readIndexFile(join(b, INDEX_FILE_NAME))];
if (!filesA || !filesB) throw new Error('an index file has another format version');
let differences = 0;
const differ = (what: string) => {
  differences++;
  console.log(`DIFFERENT: ${what}`);
};
if ([...filesA.keys()].join() !== [...filesB.keys()].join()) differ(`sources ${[...filesA.keys()]} / ${[...filesB.keys()]}`);

async function pageRows(dir: string, source: string, pages: PageOffsets, doc: number, file: Awaited<ReturnType<typeof open>>): Promise<string[]> {
  const rows: [number, number][] = pages.starts[doc]! < 0 ? [] : [[pages.starts[doc]!, pages.lengths[doc]!], ...(pages.more.get(doc) ?? [])];
  const texts: string[] = [];
  for (const [start, length] of rows) {
    const bytes = Buffer.alloc(length);
    await file.read(bytes, 0, length, start);
    texts.push(bytes.toString('utf8'));
  }
  void dir;
  void source;
  return texts.sort();
}

for (const [source, one] of filesA) {
  const other = filesB.get(source)!;
  for (const [name, array] of Object.entries(one.index)) {
    const twin = (other.index as unknown as Record<string, unknown>)[name];
    if (typeof array === 'number') {
      if (array !== twin) differ(`${source} ${name}`);
      continue;
    }
    const bytesOf = (value: unknown): Buffer => {
      if (value && typeof value === 'object' && 'bytes' in value) return Buffer.concat([bytesOf((value as { bytes: Buffer }).bytes), bytesOf((value as unknown as { ends: Uint32Array }).ends)]);
      const view = value as ArrayBufferView;
      return Buffer.from(view.buffer, view.byteOffset, view.byteLength);
    };
    if (!bytesOf(array).equals(bytesOf(twin))) differ(`${source} ${name}`);
  }
  const [fileA, fileB] = [await open(join(a, pagesFileName(source))), await open(join(b, pagesFileName(source)))];
  for (let doc = 0; doc <= one.index.documents; doc++) {
    const [rowsA, rowsB] = [await pageRows(a, source, one.pages, doc, fileA), await pageRows(b, source, other.pages, doc, fileB)];
    if (rowsA.join('\n') !== rowsB.join('\n')) {
      differ(`${source} page of doc ${doc}`);
      break;
    }
  }
  await fileA.close();
  await fileB.close();
  console.log(`${source}: ${one.index.documents} documents, ${one.index.postingDocs.length} postings compared`);
}
console.log(differences === 0 ? 'IDENTICAL: every array and every page' : `${differences} differences`);
process.exitCode = differences === 0 ? 0 : 1;
