/**
 * `@uda/search/index`: the stored lookups' index. The exporter builds its tables in `service.db`
 * (`buildSearchIndex` over `SEARCH_SPECS`, which returns the postings' arrays built with them) and
 * then the runners' files (`openSearchFiles`: the index arrays in `search-index.bin` and the page
 * files); a runner loads the file
 * (`readIndexFile`), or builds the same arrays from an older export's tables (`buildSourceFiles`).
 */
export { buildOneSourceFiles, buildSourceFiles } from './build.ts';
export { INDEX_FILE_NAME, INDEX_FORMAT_VERSION, openIndexFile, readIndexFile, writeIndexFile } from './index-file.ts';
export type { IndexFileWriter, SourceFiles } from './index-file.ts';
export type { BuiltIndex, PostingArrays, TitlePairs } from './posting-merge.ts';
export { PAGE_DOC, pageSql } from './page-sql.ts';
export type { StoredLookupSource } from './page-sql.ts';
export { pagesFileName } from './pages.ts';
export type { PageOffsets } from './pages.ts';
export { openSearchFiles } from './search-files.ts';
export type { SearchFilesWriter } from './search-files.ts';
export { indexBytes, loadSourceIndex, postingCount, postingStart } from './source-index.ts';
export type { SourceIndex } from './source-index.ts';
export { equalRange, lowerBound, prefixRange, SortedTextsBuilder, textAt, textCount, textLength, textStart } from './sorted-texts.ts';
export type { SortedTexts } from './sorted-texts.ts';
export { searchTable } from './table-names.ts';
export type { SearchTableKind } from './table-names.ts';
export { BM25 } from './spec.ts';
export type { SearchField, SearchSpec } from './spec.ts';
export { SEARCH_SPECS } from './specs.ts';
export { buildSearchIndex, buildSearchIndexes, INDEX_SLICING } from './tables.ts';
export type { BuildOptions, IndexSlicing } from './tables.ts';
