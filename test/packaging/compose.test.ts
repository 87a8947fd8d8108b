/**
 * compose.yaml, the example deployment with Docker Compose: what it must keep (metrics port on the host's loopback
 * only, the key as a secret, a health check equal to the image's, a stop grace period above the drain bound), and
 * that the agent config it carries loads with the agent's own loader and fits the image's volumes.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/index.ts';
import { daemonSchema } from '../../src/config/daemon-schema.ts';
import { dockerfileInstructions, execForm, finalStage, KEY, readRepoFile, tempDir } from './support.ts';

interface Service {
  restart?: string;
  stop_grace_period?: string;
  ports?: string[];
  secrets?: string[];
  configs?: { source: string; target: string }[];
  environment?: Record<string, string>;
  volumes?: string[];
  healthcheck?: { test: string[] };
  read_only?: boolean;
  cap_drop?: string[];
}

interface Compose {
  services: Record<string, Service>;
  secrets: Record<string, { file: string }>;
  configs: Record<string, { content: string }>;
}

const compose = parse(readRepoFile('compose.yaml')) as Compose;
const service = compose.services['pricing-agent'] as Service;
const image = finalStage(dockerfileInstructions(readRepoFile('Dockerfile')));
const imageVolumes = image.filter((i) => i.keyword === 'VOLUME').flatMap((i) => execForm(i.args));

function seconds(duration: string | undefined): number {
  const match = /^(\d+)s$/.exec(duration ?? '');
  if (!match?.[1]) throw new Error(`not a duration in seconds: ${duration}`);
  return Number(match[1]);
}

describe('compose.yaml', () => {
  it('publishes the metrics port on 127.0.0.1 only', () => {
    expect(service.ports).toEqual(['127.0.0.1:9464:9464']);
  });

  it('restarts the agent, and lets it drain before killing it', () => {
    expect(service.restart).toBe('unless-stopped');
    const drainSeconds = daemonSchema({ baseDir: '/', env: {}, warn: () => undefined }).parse({}).shutdown_timeout_ms / 1000;
    expect(seconds(service.stop_grace_period)).toBeGreaterThanOrEqual(drainSeconds + 10);
  });

  it('passes the key as the secret pricing_api_key, from a file', () => {
    expect(service.secrets).toEqual(['pricing_api_key']);
    expect(compose.secrets.pricing_api_key?.file).toBe('./secrets/pricing_api_key');
  });

  it('has the health check of the image', () => {
    const healthcheck = image.find((i) => i.keyword === 'HEALTHCHECK');
    expect(service.healthcheck?.test).toEqual(['CMD', ...execForm(healthcheck?.args ?? '')]);
  });

  it('mounts a volume on each of the image volumes, and the config where PRICING_AGENT_CONFIG points', () => {
    const targets = (service.volumes ?? []).map((v) => v.split(':')[1]);
    expect(targets.sort()).toEqual([...imageVolumes].sort());
    expect(service.configs).toEqual([{ source: 'pricing_agent_config', target: service.environment?.PRICING_AGENT_CONFIG }]);
    expect(service.read_only).toBe(true);
    expect(service.cap_drop).toEqual(['ALL']);
  });

  it('carries an agent config that loads, reads the key from the secret, and keeps its files in the volumes', async () => {
    const content = compose.configs.pricing_agent_config?.content ?? '';
    // Compose interpolates ${...} in the file itself: the config must not rely on it.
    expect(content).not.toContain('$');
    // /run/secrets exists only in a container: the same text, with the secret's directory moved to a temp dir.
    const dir = tempDir();
    writeFileSync(join(dir, 'pricing_api_key'), `${KEY}\n`);
    chmodSync(join(dir, 'pricing_api_key'), 0o600);
    const file = join(dir, 'pricing-agent.yaml');
    writeFileSync(file, content.replaceAll('/run/secrets/', `${dir}/`));
    const config = await loadConfig(file, {});
    expect(config.api.key).toBe(KEY);
    expect(config.api.key_file).toBe(join(dir, 'pricing_api_key'));
    // Inside the container the server must listen on all of the container's interfaces for the published port.
    expect(config.http).toEqual({ enabled: true, host: '0.0.0.0', port: 9464, console: true, allowed_hosts: [] });
    const [state, inbox, outbox] = imageVolumes;
    expect(config.state.dir).toBe(state);
    expect(config.sources.length).toBeGreaterThan(0);
    for (const source of config.sources) expect(source.path.startsWith(`${inbox}/`), source.path).toBe(true);
    expect(config.outbox.exports?.dir).toBe(outbox);
  });
});
