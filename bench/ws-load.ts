/**
 * Load process of the WebSocket bench (run by bench/ws.ts, one or more of them): opens N clients to
 * the URL, records each agent_dispatch frame's delay (its action carries the publish time), and
 * sends (IPC) the samples, this process's event-loop delay and CPU time when told to stop.
 * The event-loop delay tells whether this process, not the server, held frames back: a frame that
 * reached the socket waits for the loop to read it.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { WebSocket } from 'ws';

export interface LoadResult {
  delays: number[];
  closed: number;
  loop_p99_ms: number;
  loop_max_ms: number;
  cpu_ms: number;
}

const [url, nArg] = process.argv.slice(2);
const n = Number(nArg);
const now = () => performance.timeOrigin + performance.now();
const delays: number[] = [];
let opened = 0;
let closed = 0;
const sockets: WebSocket[] = [];
const loop = monitorEventLoopDelay({ resolution: 5 });
let cpu: NodeJS.CpuUsage | undefined;

function open(i: number): Promise<void> {
  return new Promise((resolve) => {
    // The load generator's own work per frame kept small: no UTF-8 re-check of what our server sent.
    const ws = new WebSocket(url, { perMessageDeflate: false, skipUTF8Validation: true });
    sockets[i] = ws;
    ws.on('open', () => {
      opened++;
      resolve();
    });
    ws.on('message', (d) => {
      const f = JSON.parse(d.toString()) as { type: string; action?: string };
      if (f.type === 'agent_dispatch' && f.action?.startsWith('bench-')) delays.push(now() - Number(f.action.slice(6)));
    });
    ws.on('close', () => closed++);
    ws.on('error', () => resolve());
  });
}

async function main(): Promise<void> {
  for (let i = 0; i < n; i += 50) await Promise.all(Array.from({ length: Math.min(50, n - i) }, (_, k) => open(i + k)));
  loop.enable();
  cpu = process.cpuUsage();
  process.send!({ ready: opened });
  process.once('message', () => {
    loop.disable();
    const used = process.cpuUsage(cpu);
    for (const ws of sockets) ws?.terminate();
    const result: LoadResult = {
      delays: delays.map((d) => Math.round(d * 100) / 100),
      closed,
      loop_p99_ms: loop.percentile(99) / 1e6,
      loop_max_ms: loop.max / 1e6,
      cpu_ms: (used.user + used.system) / 1000,
    };
    // The process ends by itself once the message is out and the channel closed.
    process.send!(result, () => process.disconnect());
  });
}

if (require.main === module) void main();
