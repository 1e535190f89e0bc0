import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const MAX_CACHED = 2000;

/** `make(key)` once per key (up to MAX_CACHED keys; beyond that it is made per call, never dropped from the metric). */
function cached<T>(map: Map<string, T>, key: string, make: () => T): T {
  let v = map.get(key);
  if (v === undefined) {
    v = make();
    if (map.size < MAX_CACHED) map.set(key, v);
  }
  return v;
}

type Labels = Record<string, string>;

/**
 * A counter whose increments are added on the request path to a plain number per label set and
 * handed to prom-client when it collects (a scrape, or `get()`), through the metric's `collect`
 * hook: prom-client's own `inc` validates and hashes the labels on every call.
 */
class PendingCounter {
  readonly counter: Counter<string>;
  private readonly pending = new Map<string, { labels: Labels; n: number }>();

  constructor(config: { name: string; help: string; labelNames: string[]; registers: Registry[] }) {
    const pending = this.pending;
    this.counter = new Counter({
      ...config,
      collect() {
        for (const e of pending.values()) {
          if (e.n === 0) continue;
          this.inc(e.labels, e.n);
          e.n = 0;
        }
      },
    });
  }

  /** Adds `n` to the series `key`; false when `key` is new (then call `start`). */
  bump(key: string, n: number): boolean {
    const e = this.pending.get(key);
    if (!e) return false;
    e.n += n;
    return true;
  }

  start(key: string, labels: Labels, n: number): void {
    if (this.pending.size < MAX_CACHED) this.pending.set(key, { labels, n });
    else this.counter.inc(labels, n);
  }
}

/** Prometheus metrics of one app instance (own registry, so several apps can coexist in tests). */
export class Metrics {
  readonly registry = new Registry();
  private readonly http = new PendingCounter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests by method, route template and status.',
    labelNames: ['method', 'route', 'status'],
    registers: [this.registry],
  });
  readonly httpRequests = this.http.counter;
  readonly httpDuration = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP request latency by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly workflowStarts = new Counter({
    name: 'svc_workflow_starts_total',
    help: 'Temporal workflow starts requested by the API, by kind.',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  private readonly chat = new PendingCounter({
    name: 'svc_chat_requests_total',
    help: 'Model-route requests (chat, lanes, commons) by lane and status; no tenant labels.',
    labelNames: ['lane', 'status'],
    registers: [this.registry],
  });
  readonly chatRequests = this.chat.counter;
  private readonly tokens = new PendingCounter({
    name: 'svc_chat_tokens_total',
    help: 'Tokens of model-route requests by lane and direction (in = prompt, out = completion).',
    labelNames: ['lane', 'direction'],
    registers: [this.registry],
  });
  readonly chatTokens = this.tokens.counter;

  // Pre-labelled histogram children, looked up by a plain string: `observe(labels)` allocated the label object per call.
  private readonly durationChildren = new Map<string, ReturnType<Histogram['labels']>>();

  /**
   * What GET /v1/metrics exposes: this registry, or, in one of several API processes sharing a port
   * (SVC_API_PROCESSES), every process's series summed (set by `serveApi`).
   */
  exposition: () => Promise<string> = () => this.registry.metrics();

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'svc_' });
  }

  /** One finished HTTP request: svc_http_requests_total and svc_http_request_duration_seconds. */
  observeHttp(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    if (!this.http.bump(key, 1)) this.http.start(key, { method, route, status: String(status) }, 1);
    cached(this.durationChildren, key, () =>
      this.httpDuration.labels({ method, route, status: String(status) }),
    ).observe(seconds);
  }

  /** svc_chat_requests_total{lane,status} + 1. */
  countChat(lane: string, status: number): void {
    const key = `${status} ${lane}`;
    if (!this.chat.bump(key, 1)) this.chat.start(key, { lane, status: String(status) }, 1);
  }

  /** svc_chat_tokens_total{lane,direction} + n. */
  countTokens(lane: string, direction: 'in' | 'out', n: number): void {
    const key = `${direction} ${lane}`;
    if (!this.tokens.bump(key, n)) this.tokens.start(key, { lane, direction }, n);
  }
}
