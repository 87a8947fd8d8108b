/** What POS systems consume beyond the tables (the feed and its offsets are in src/store/price-feed.ts): per-store files. */
export * from './store-files.ts';
export * from './feed-format.ts';
export { writeFileAtomic, fsyncDirectory, ensureDirectory } from '../atomic-file.ts';
