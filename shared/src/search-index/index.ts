/**
 * `@uda/shared/search-index`: the stored lookups' index arrays and page files, built by the exporter
 * for the runners (and by a runner itself from an older export), and the file that carries them.
 */
export { buildOneSourceFiles, buildSourceFiles } from './build.ts';
export { INDEX_FILE_NAME, INDEX_FORMAT_VERSION, openIndexFile, readIndexFile, writeIndexFile } from './index-file.ts';
export type { IndexFileWriter, SourceFiles } from './index-file.ts';
export { PAGE_DOC, pageSql } from './page-sql.ts';
export type { StoredLookupSource } from './page-sql.ts';
export { pagesFileName } from './pages.ts';
export type { PageOffsets } from './pages.ts';
export { indexBytes, loadSourceIndex } from './source-index.ts';
export type { SourceIndex } from './source-index.ts';
export { equalRange, lowerBound, prefixRange, SortedTextsBuilder, textAt, textCount, textLength, textStart } from './sorted-texts.ts';
export type { SortedTexts } from './sorted-texts.ts';
export { compareUtf8, stemOf, stemPhrase } from './stems.ts';
