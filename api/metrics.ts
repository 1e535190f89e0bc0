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

/** Prometheus metrics of one app instance (own registry, so several apps can coexist in tests). */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
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

  readonly chatRequests = new Counter({
    name: 'svc_chat_requests_total',
    help: 'Model-route requests (chat, lanes, commons) by lane and status; no tenant labels.',
    labelNames: ['lane', 'status'] as const,
    registers: [this.registry],
  });
  readonly chatTokens = new Counter({
    name: 'svc_chat_tokens_total',
    help: 'Tokens of model-route requests by lane and direction (in = prompt, out = completion).',
    labelNames: ['lane', 'direction'] as const,
    registers: [this.registry],
  });

  // Pre-labelled children, looked up by a plain string: `inc(labels)` hashed the label object on every call.
  private readonly httpChildren = new Map<
    string,
    { requests: ReturnType<Counter['labels']>; duration: ReturnType<Histogram['labels']> }
  >();
  private readonly chatChildren = new Map<string, ReturnType<Counter['labels']>>();
  private readonly tokenChildren = new Map<string, ReturnType<Counter['labels']>>();

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
    const c = cached(this.httpChildren, `${method} ${status} ${route}`, () => {
      const labels = { method, route, status: String(status) };
      return { requests: this.httpRequests.labels(labels), duration: this.httpDuration.labels(labels) };
    });
    c.requests.inc();
    c.duration.observe(seconds);
  }

  /** svc_chat_requests_total{lane,status} + 1. */
  countChat(lane: string, status: number): void {
    cached(this.chatChildren, `${status} ${lane}`, () =>
      this.chatRequests.labels({ lane, status: String(status) }),
    ).inc();
  }

  /** svc_chat_tokens_total{lane,direction} + n. */
  countTokens(lane: string, direction: 'in' | 'out', n: number): void {
    cached(this.tokenChildren, `${direction} ${lane}`, () => this.chatTokens.labels({ lane, direction })).inc(n);
  }
}
