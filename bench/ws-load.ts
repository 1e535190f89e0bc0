/**
 * Load process of the WebSocket bench (run by bench/ws.ts as a child process): opens N clients to
 * the URL, records each agent_dispatch frame's delay (its action carries the send time), and prints
 * one JSON line with the samples when told to stop on stdin.
 */
import { WebSocket } from 'ws';

const [url, nArg] = process.argv.slice(2);
const n = Number(nArg);
const now = () => performance.timeOrigin + performance.now();
const delays: number[] = [];
let opened = 0;
let closed = 0;
const sockets: WebSocket[] = [];

function open(i: number): Promise<void> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
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
  process.stdout.write(JSON.stringify({ ready: opened }) + '\n');
  process.stdin.once('data', () => {
    for (const ws of sockets) ws?.terminate();
    // Pipes are asynchronous: the process ends by itself once the (large) line is flushed and stdin is closed.
    process.stdout.write(JSON.stringify({ delays: delays.map((d) => Math.round(d * 100) / 100), closed }) + '\n', () =>
      process.stdin.destroy(),
    );
  });
}

void main();
