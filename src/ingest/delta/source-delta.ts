/**
 * The delta part of a push source, from its configuration: one home for the three places that build a PushSource (the
 * daemon's watcher, `push --source/--entity`, `files retry`).
 */
import type { Entity } from '../../api/schemas/index.ts';
import { deltaSettings, type DeltaSettings } from '../../config/delta-schema.ts';
import { SourceSchema, type SourceConfig } from '../../config/source-schema.ts';
import type { DeepReadonly } from '../../config/index.ts';

export interface SourceDelta {
  readonly delta: DeltaSettings;
  readonly options: Readonly<Record<string, unknown>>;
  readonly comparesEveryFile: boolean;
}

/** A configured source's delta settings (`mode` as it will be pushed: `--mode` may override the source's). */
export function sourceDelta(config: DeepReadonly<SourceConfig>, mode: 'bulk' | 'import' = config.mode): SourceDelta {
  const delta = deltaSettings({ ...config, mode });
  return { delta, options: config, comparesEveryFile: delta.enabled };
}

/** `push --entity E`: the entity's defaults (delta for products and product_store, in bulk mode). */
export function entityDelta(entity: Entity, mode: 'bulk' | 'import'): SourceDelta {
  return sourceDelta(SourceSchema.parse({ name: `cli-${entity}`, entity, path: '.', mode }), mode);
}
