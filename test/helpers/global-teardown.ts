export default async function globalTeardown(): Promise<void> {
  const server = (globalThis as { __temporalServer?: { stop(): Promise<void> } }).__temporalServer;
  if (server) await server.stop();
}
