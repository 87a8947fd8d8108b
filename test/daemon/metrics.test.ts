/**
 * The agent's /metrics page follows Prometheus conventions: `promtool check metrics` (Debian's prometheus package;
 * .ci/run installs it when it can) reports nothing, with every metric holding values as in a running agent.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { AgentMetrics } from '../../src/daemon/metrics.ts';
import { skipWithout } from '../support/required-tool.ts';

function populated(): AgentMetrics {
  const m = new AgentMetrics({
    outbox: () => Promise.resolve({ feedRows: 1200, consumers: [{ name: 'pos-north', lag: 3 }] }),
    mirrors: () => Promise.resolve([{ stream: 'products', watermarkAgeSeconds: 42 }, { stream: 'grids', watermarkAgeSeconds: null }]),
    ready: () => true,
    feed: () => Promise.resolve({
      listen: 'https://0.0.0.0:9465',
      apply_deadline: '2h',
      consumers: [
        { name: 'store-0417-pos', offset: 1200, last_seen: '2026-11-22T10:00:00.000Z', stores: [{ store_id: 'b3a1c2d4-0000-4000-8000-000000000001', applied_seq: 1100, lag_rows: 100, lag_seconds: 8000 }] },
        { name: 'middleware', offset: null, last_seen: null, stores: [] },
      ],
      overdue: [{ consumer: 'store-0417-pos', store_id: 'b3a1c2d4-0000-4000-8000-000000000001', rows: 12, oldest_recorded_at: '2026-11-22T07:00:00.000Z' }],
    }),
    heldFiles: () => Promise.resolve([{ source: 'erp-store-prices', count: 1 }]),
  });
  m.approvalToOutbox.observe(42);
  m.feedRequests.inc({ consumer: 'store-0417-pos' });
  m.feedRowsServed.inc({ consumer: 'store-0417-pos' }, 100);
  m.feedRateLimited.inc({ consumer: 'store-0417-pos' });
  m.feedUnauthorized.inc();
  m.feedConnections.set(3);
  m.files.inc({ source: 'erp-products', outcome: 'done' });
  m.rows.inc({ entity: 'transactions', result: 'accepted' }, 1000);
  m.apiRequests.inc({ operation: 'transactions.bulk', status: '200' });
  m.apiRetries.inc({ operation: 'transactions.bulk' });
  m.rateLimitWaits.inc();
  m.rateLimitWaitSeconds.inc(2.5);
  m.importJobs.inc({ state: 'completed' });
  m.approvalsStored.inc(500);
  m.approvalsAcknowledged.inc(500);
  m.jobRuns.inc({ job: 'approved_prices', outcome: 'success' });
  m.jobLastSuccess.set({ job: 'approved_prices' }, 1_790_000_000);
  m.keyRejected.set(0);
  return m;
}

const noPromtool = skipWithout('promtool', spawnSync('promtool', ['--version']).status === 0, 'prometheus');

/** The metrics the issue lists. */
const ISSUE_METRICS = [
  'pricing_agent_files_total', 'pricing_agent_rows_total', 'pricing_agent_api_requests_total', 'pricing_agent_api_retries_total',
  'pricing_agent_rate_limit_waits_total', 'pricing_agent_import_jobs_total', 'pricing_agent_approvals_stored_total',
  'pricing_agent_approvals_acknowledged_total', 'pricing_agent_outbox_feed_rows', 'pricing_agent_outbox_consumer_lag',
  'pricing_agent_mirror_watermark_age_seconds', 'pricing_agent_job_last_success_timestamp_seconds', 'pricing_agent_ready',
];

describe('/metrics', () => {
  it('exposes every metric the issue lists, under pricing_agent_', async () => {
    const text = await populated().registry.metrics();
    for (const name of ISSUE_METRICS) expect(text, name).toMatch(new RegExp(`^${name}(\\{| )`, 'm'));
    expect(text).toContain('pricing_agent_outbox_consumer_lag{consumer="pos-north"} 3');
    expect(text).toContain('pricing_agent_mirror_watermark_age_seconds{stream="products"} 42');
  });

  it('shows the feed per consumer, labelled by consumer names only, never by store', async () => {
    const text = await populated().registry.metrics();
    for (const line of [
      'pricing_agent_feed_offset{consumer="store-0417-pos"} 1200',
      'pricing_agent_feed_applied_seq{consumer="store-0417-pos"} 1100',
      'pricing_agent_feed_apply_lag_rows{consumer="store-0417-pos"} 100',
      'pricing_agent_feed_apply_lag_seconds{consumer="store-0417-pos"} 8000',
      'pricing_agent_feed_apply_overdue_rows{consumer="store-0417-pos"} 12',
      'pricing_agent_feed_apply_overdue_rows{consumer="middleware"} 0',
      'pricing_agent_feed_last_seen_timestamp_seconds{consumer="store-0417-pos"} 1795341600',
      'pricing_agent_approval_to_outbox_seconds_bucket{le="60"} 1',
    ]) {
      expect(text).toContain(line);
    }
    expect(text).not.toContain('b3a1c2d4');
    expect(text).not.toMatch(/pricing_agent_feed_offset\{consumer="middleware"\}/);
    const labels = new Set([...text.matchAll(/^pricing_agent_feed_\w+\{(\w+)=/gm)].map((m) => m[1]));
    expect([...labels]).toEqual(['consumer']);
  });

  it.skipIf(noPromtool)('passes promtool check metrics without a single complaint', async () => {
    const text = await populated().registry.metrics();
    const result = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});
