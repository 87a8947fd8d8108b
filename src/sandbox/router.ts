/**
 * A small method + path router: patterns like `/v1/products/:entity_id`, matched segment by segment in the order
 * routes were added (so `/v1/products/bulk` must be added before `/v1/products/:entity_id`). A path that matches
 * some route but not with this method is 405 with an Allow header; a path that matches none is 404.
 */
import type { IncomingMessage } from 'node:http';
import type { Reply } from './http-io.ts';

/** How the server prepares the body before the handler runs. */
export type BodyMode = 'json' | 'stream' | 'none';

export interface RequestContext {
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** Parsed JSON for 'json' routes (undefined when the body is empty). */
  readonly body: unknown;
  /** The raw request, for 'stream' routes (multipart uploads). */
  readonly req: IncomingMessage;
}

export type Handler<C> = (ctx: C) => Reply | Promise<Reply>;

export interface Route<C> {
  readonly method: string;
  readonly pattern: string;
  readonly body: BodyMode;
  readonly handler: Handler<C>;
}

interface Compiled<C> {
  readonly route: Route<C>;
  /** Literal segments as strings, parameters as { param }. */
  readonly segments: readonly (string | { readonly param: string })[];
}

export type RouteMatch<C> =
  | { readonly kind: 'route'; readonly route: Route<C>; readonly params: Record<string, string> }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'method_not_allowed'; readonly allow: readonly string[] };

export class Router<C> {
  readonly #routes: Compiled<C>[] = [];

  add(method: string, pattern: string, body: BodyMode, handler: Handler<C>): this {
    const segments = pattern
      .split('/')
      .slice(1)
      .map((segment) => (segment.startsWith(':') ? { param: segment.slice(1) } : segment));
    this.#routes.push({ route: { method, pattern, body, handler }, segments });
    return this;
  }

  match(method: string, path: string): RouteMatch<C> {
    const parts = path.split('/').slice(1);
    const allow = new Set<string>();
    for (const compiled of this.#routes) {
      const params = matchSegments(compiled.segments, parts);
      if (params === null) continue;
      if (compiled.route.method === method) return { kind: 'route', route: compiled.route, params };
      allow.add(compiled.route.method);
    }
    return allow.size === 0 ? { kind: 'not_found' } : { kind: 'method_not_allowed', allow: [...allow] };
  }
}

function matchSegments(segments: Compiled<unknown>['segments'], parts: readonly string[]): Record<string, string> | null {
  if (segments.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i += 1) {
    const segment = segments[i]!;
    const part = parts[i]!;
    if (typeof segment === 'string') {
      if (segment !== part) return null;
    } else {
      if (part === '') return null;
      params[segment.param] = safeDecode(part);
    }
  }
  return params;
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
