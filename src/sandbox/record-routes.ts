/**
 * Routes of the four record resources and their CSV imports, and job polling. Literal paths (`bulk`) are added
 * before the `:entity_id` patterns they would otherwise match.
 */
import { ENTITIES, type Entity } from '../api/schemas/index.ts';
import { bulkReply, deleteReply, getReply, listReply, parseWrite, patchReply, upsertByIdReply, upsertByKeyReply } from './crud.ts';
import type { TableRow } from './entity-table.ts';
import { NOT_FOUND, invalid, json, type Reply } from './http-io.ts';
import { runImportJob } from './import-job.ts';
import { receiveCsv, type CsvUpload } from './import-upload.ts';
import { finishJob, jobJson, type JobRecord } from './jobs.ts';
import { listContext } from './query.ts';
import { parsePathId, type Resource } from './resource.ts';
import type { Router } from './router.ts';
import type { ApiContext, World } from './world.ts';

type ApiRouter = Router<ApiContext>;

const id = (ctx: ApiContext): string => ctx.params.entity_id ?? '';
/** The dialect's answer to a DELETE of a row deleted before (Dialect.deleteAgain). */
const againNotFound = (ctx: ApiContext): boolean => ctx.world.dialect.deleteAgain === 'not_found';

export function addRecordRoutes(router: ApiRouter): void {
  // Products
  addUpsertByIdRoutes(router, '/v1/products', (world) => world.products, (ctx) =>
    listReply(ctx.world.products, ctx.query, listContext(ctx), ctx.world.dialect.undocumentedLists),
  );

  // Product store
  router
    .add('POST', '/v1/product_store/bulk', 'json', (ctx) =>
      bulkReply(ctx.world.productStore, ctx.body, ctx.now, ctx.world.dialect.storeBulkRefusals === 'refused'),
    )
    .add('GET', '/v1/product_store', 'none', (ctx) => listReply(ctx.world.productStore, ctx.query, listContext(ctx)))
    .add('POST', '/v1/product_store', 'json', (ctx) => upsertByKeyReply(ctx.world.productStore, ctx.body, ctx.now))
    .add('GET', '/v1/product_store/:entity_id', 'none', (ctx) => getReply(ctx.world.productStore, id(ctx)))
    .add('PATCH', '/v1/product_store/:entity_id', 'json', (ctx) => patchReply(ctx.world.productStore, id(ctx), ctx.body, ctx.now))
    .add('DELETE', '/v1/product_store/:entity_id', 'none', (ctx) => deleteReply(ctx.world.productStore, id(ctx), againNotFound(ctx)));

  // Transactions (the export routes, with more segments, cannot collide with these)
  addUpsertByIdRoutes(router, '/v1/transactions', (world) => world.transactions, (ctx) =>
    listReply(ctx.world.transactions, ctx.query, listContext(ctx)),
  );

  // Competitor prices: the single create is not idempotent
  router
    .add('POST', '/v1/competitor_prices/bulk', 'json', (ctx) => bulkReply(ctx.world.competitorPrices, ctx.body, ctx.now))
    .add('GET', '/v1/competitor_prices', 'none', (ctx) => listReply(ctx.world.competitorPrices, ctx.query, listContext(ctx)))
    .add('POST', '/v1/competitor_prices', 'json', (ctx) => {
      const resource = ctx.world.competitorPrices;
      const write = parseWrite(resource, ctx.body);
      if (Array.isArray(write)) return invalid(write);
      return json(201, resource.toJson(resource.createSingle(write, ctx.now)));
    })
    .add('PATCH', '/v1/competitor_prices/:entity_id', 'json', (ctx) => patchReply(ctx.world.competitorPrices, id(ctx), ctx.body, ctx.now))
    .add('DELETE', '/v1/competitor_prices/:entity_id', 'none', (ctx) => deleteReply(ctx.world.competitorPrices, id(ctx), againNotFound(ctx)));

  // CSV imports and job polling
  for (const entity of ENTITIES) {
    router.add('POST', `/v1/imports/${entity}`, 'stream', (ctx) => importReply(ctx, entity));
  }
  router.add('GET', '/v1/jobs/:job_id', 'none', (ctx) => {
    const jobId = parsePathId('uuid', ctx.params.job_id ?? '', 'job_id');
    if (Array.isArray(jobId)) return invalid(jobId);
    const job = ctx.world.jobs.get(String(jobId));
    return job ? json(200, jobJson(job, ctx.world.dialect)) : NOT_FOUND;
  });
}

/**
 * The routes of a resource whose single write is an upsert on the id in the path: bulk (added before the
 * `:entity_id` patterns it would otherwise match), the list, upsert, PATCH and DELETE by id.
 */
function addUpsertByIdRoutes<R extends TableRow, W>(
  router: ApiRouter,
  path: string,
  resourceOf: (world: World) => Resource<R, W>,
  list: (ctx: ApiContext) => Reply,
): void {
  router
    .add('POST', `${path}/bulk`, 'json', (ctx) => bulkReply(resourceOf(ctx.world), ctx.body, ctx.now))
    .add('GET', path, 'none', list)
    .add('POST', `${path}/:entity_id`, 'json', (ctx) => upsertByIdReply(resourceOf(ctx.world), id(ctx), ctx.body, ctx.now))
    .add('PATCH', `${path}/:entity_id`, 'json', (ctx) => patchReply(resourceOf(ctx.world), id(ctx), ctx.body, ctx.now))
    .add('DELETE', `${path}/:entity_id`, 'none', (ctx) => deleteReply(resourceOf(ctx.world), id(ctx), againNotFound(ctx)));
}

/** Starts the job on the entity's resource (a switch keeps each resource's own types). */
function runJob(world: World, entity: Entity, job: JobRecord, upload: CsvUpload): Promise<void> {
  const { jobPace, clock } = world.options;
  const run = <R extends TableRow, W>(resource: Resource<R, W>) =>
    runImportJob(job, resource, upload, jobPace, clock, world.lifetime.signal, world.dialect.jobRowErrors !== 'completed');
  switch (entity) {
    case 'products':
      return run(world.productImports);
    case 'product_store':
      return run(world.productStore);
    case 'transactions':
      return run(world.transactions);
    case 'competitor_prices':
      return run(world.competitorPrices);
  }
}

/** 202 with the job id as soon as the upload is received and checked; the job runs on at its pace. */
async function importReply(ctx: ApiContext, entity: Entity): Promise<Reply> {
  const upload = await receiveCsv(ctx.req);
  if (Array.isArray(upload)) return invalid(upload);
  const { world } = ctx;
  const job = world.jobs.create(entity, world.now());
  runJob(world, entity, job, upload).catch((error: unknown) => {
    if (world.lifetime.signal.aborted) return;
    world.counters.internal_errors += 1;
    finishJob(job, world.now(), `internal error: ${error instanceof Error ? error.message : String(error)}`);
  });
  return json(202, { job_id: job.job_id });
}
