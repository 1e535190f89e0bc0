import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Pages the browser tests open, served on loopback; counts every request per path. */
export interface PageServer {
  url: string;
  host: string;
  hits: string[];
  close(): Promise<void>;
}

const html = (body: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>T</title></head><body>${body}</body></html>`;

export function bigPage(n: number): string {
  const items = Array.from({ length: n }, (_, i) =>
    i % 3 === 0
      ? `<button>Item ${i}</button>`
      : i % 3 === 1
        ? `<a href="#i${i}">Link ${i}</a>`
        : `<p>Paragraph ${i}</p>`,
  );
  return html(`<h1>Big</h1>${items.join('')}`);
}

const PAGES: Record<string, (q: URLSearchParams) => string> = {
  '/form': () =>
    html(`<h1>Sign up</h1><form action="/result" method="get">
      <label>Name <input name="name"></label>
      <label>Colour <select name="colour"><option>red</option><option>blue</option></select></label>
      <label><input type="checkbox" name="terms"> Accept terms</label>
      <button type="submit">Submit</button></form>
      <button onclick="document.getElementById('out').textContent='clicked once'">Press me</button><p id="out">not yet</p>`),
  '/result': (q) =>
    html(
      `<h1>Result</h1><p>Hello ${(q.get('name') ?? '').replace(/[<&]/g, '')}, colour ${q.get('colour')}, terms ${q.get('terms') ?? 'off'}</p>`,
    ),
  '/frames': () => html(`<h1>Outer</h1><iframe src="/inner" title="inner"></iframe>`),
  '/inner': () => html(`<button onclick="this.textContent='Inner done'">Inner button</button>`),
  // Each session tags itself: cookie + localStorage, then /who shows what this context holds.
  '/tag': (q) =>
    html(
      `<p>tagging</p><script>document.cookie='who=${q.get('v')}; path=/';localStorage.setItem('who','${q.get('v')}');document.title='tagged'</script>`,
    ),
  '/who': () =>
    html(
      `<p id="w">?</p><script>document.getElementById('w').textContent='cookie['+document.cookie+'] ls['+(localStorage.getItem('who')??'')+']'</script>`,
    ),
  '/login': () =>
    html(`<button onclick="login()">Log in</button><p id="s">out</p><script>
      function login(){document.cookie='session=ok; path=/';localStorage.setItem('token','t-123');
        const r=indexedDB.open('app',1);r.onupgradeneeded=()=>r.result.createObjectStore('kv');
        r.onsuccess=()=>{const tx=r.result.transaction('kv','readwrite');tx.objectStore('kv').put('idb-ok','profile');tx.oncomplete=()=>{document.getElementById('s').textContent='in'}}}</script>`),
  '/account': () =>
    html(`<p id="a">checking</p><script>
      const r=indexedDB.open('app',1);r.onupgradeneeded=()=>r.result.createObjectStore('kv');
      r.onsuccess=()=>{const g=r.result.transaction('kv').objectStore('kv').get('profile');g.onsuccess=()=>{
        document.getElementById('a').textContent='account cookie:'+(document.cookie.includes('session=ok')?'yes':'no')+' ls:'+(localStorage.getItem('token')??'none')+' idb:'+(g.result??'none')}}</script>`),
  '/img': (q) => html(`<h1>Image page</h1><img src="${q.get('src')}" alt="probe">`),
  '/big': (q) => bigPage(Number(q.get('n') ?? '1000')),
  '/popup': () =>
    html(`<button onclick="window.open('/form')">Open window</button><a href="/file.bin" download>Get file</a>`),
};

export async function startPageServer(): Promise<PageServer> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    hits.push(u.pathname);
    if (u.pathname === '/redirect') {
      res.writeHead(302, { location: u.searchParams.get('to') ?? '/' });
      return res.end();
    }
    if (u.pathname === '/file.bin') {
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-disposition': 'attachment; filename=f.bin',
      });
      return res.end('binary');
    }
    const page = PAGES[u.pathname];
    if (!page) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      return res.end('not found');
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page(u.searchParams));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `http://${host}`,
    host,
    hits,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
