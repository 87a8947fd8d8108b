/** What POS systems consume: the change feed, consumer offsets, per-store files, and a summary. */
export * from './price-feed.ts';
export * from './outbox-stats.ts';
export * from './store-files.ts';
export * from './feed-format.ts';
export { writeFileAtomic, fsyncDirectory, ensureDirectory } from '../atomic-file.ts';
