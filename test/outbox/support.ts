import type { ApprovedPrice } from '../../src/api/schemas/index.ts';
import { storeDeliveredPage } from '../../src/store/approved-prices.ts';
import { pullCursor, recordDeliveryIntent } from '../../src/store/delivery-intents.ts';
import type { StateDb } from '../../src/store/state-db.ts';

export { approval, onCleanup, openTempDb, reopenTempDb, tempDir, fixedClock } from '../store/support.ts';

export const STORE_A = 'aaaaaaaa-0000-4000-8000-000000000001';
export const STORE_B = 'bbbbbbbb-0000-4000-8000-000000000002';

let requests = 0;

/** Stores `items` as one deliveries page, as the pull does (intent, then page). */
export async function deliver(db: StateDb, items: readonly ApprovedPrice[]): Promise<void> {
  requests += 1;
  const intent = await recordDeliveryIntent(db, {
    requestId: `00000000-0000-4000-8000-${String(requests).padStart(12, '0')}`,
    filters: {},
    cursor: await pullCursor(db),
  });
  await storeDeliveredPage(db, intent.id, items, null);
}
