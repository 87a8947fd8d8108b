import { z } from 'zod';
import { ApiLocalValidationError } from '../errors.ts';
import { callJson, type CallOptions } from '../call.ts';
import { ExportStatus, Job } from '../schemas/index.ts';
import type { ApiTransport } from '../transport.ts';

/** Ids are UUID-shaped (any version and variant: a server may issue others than RFC 4122 ones). */
const uuid = z.guid();

function requireUuid(operation: 'jobs.get' | 'transactionExports.cancel', id: string): void {
  if (!uuid.safeParse(id).success) throw new ApiLocalValidationError(operation, `expected a UUID, got ${JSON.stringify(id.slice(0, 64))}`);
}

export function jobsApi(t: ApiTransport) {
  return {
    get: async (jobId: string, o: CallOptions = {}) => {
      requireUuid('jobs.get', jobId);
      return await callJson(t, { operation: 'jobs.get', id: jobId, signal: o.signal }, Job);
    },
  };
}

export function transactionExportsApi(t: ApiTransport) {
  return {
    /** Cancels a transaction export and returns its status object (queued → cancelled, running → cancelling). */
    cancel: async (exportId: string, o: CallOptions = {}) => {
      requireUuid('transactionExports.cancel', exportId);
      return await callJson(t, { operation: 'transactionExports.cancel', id: exportId, signal: o.signal }, ExportStatus);
    },
  };
}
