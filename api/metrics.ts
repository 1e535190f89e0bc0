import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

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

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'svc_' });
  }
}
