import {
  Agent,
  applyPatchTool,
  computerTool,
  hostedMcpTool,
  Runner,
  shellTool,
  type ApplyPatchOperation,
  type Computer,
  type ShellAction,
} from '@openai/agents-core';
import { imageGenerationTool, OpenAIProvider } from '@openai/agents-openai';
import sharp from 'sharp';
import { FAKE_PNG_B64, type FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { startMcpPeer, type McpPeer } from '../helpers/mcp-peer';

// OpenAI's Agents SDK (the real client, not a fake) running agents with its ShellTool, ApplyPatchTool and ComputerTool
// against POST /v1/responses: the SDK reads our shell_call, apply_patch_call and computer_call items, runs its own
// shell, editor and computer, sends their outputs back, and the run ends with the lane's answer. Its hosted MCP tool
// runs against a real MCP server, and its image generation tool gets images from the images lane. The lane is a fake
// OpenAI-compatible upstream.

let h: Harness;
let fake: FakeOpenAI;
let runner: Runner;
let peer: McpPeer;

beforeAll(async () => {
  peer = await startMcpPeer();
});
afterAll(async () => {
  await peer?.close();
});
beforeEach(() => peer.reset());

// The MCP server listens on 127.0.0.1: the fetch guard lets the service reach it only with this setting.
withFakeUpstream({ scopes: ['runtime:chat'], resetEach: {}, env: { SVC_ALLOW_PRIVATE_FETCH: '127.0.0.1' } }, (up) => {
  ({ fake, h } = up);
  runner = new Runner({
    modelProvider: new OpenAIProvider({ apiKey: up.key, baseURL: `${h.url}/v1`, useResponses: true }),
    tracingDisabled: true,
  });
});

/** The messages the upstream got, after the persona's system message. */
const sentMessages = (i = -1) => fake.chats.at(i)!.body.messages.slice(1);

describe("OpenAI's Agents SDK with the client-run built-in tools", () => {
  test('ShellTool and ApplyPatchTool: the SDK runs the calls we return and the run ends with the answer', async () => {
    const ran: ShellAction[] = [];
    const edits: ApplyPatchOperation[] = [];
    const shell = shellTool({
      shell: {
        run: async (action) => {
          ran.push(action);
          return {
            output: action.commands.map((c) => ({
              stdout: `ran ${c}`,
              stderr: '',
              outcome: { type: 'exit' as const, exitCode: 0 },
            })),
          };
        },
      },
    });
    const patch = applyPatchTool({
      editor: {
        createFile: async (op) => void edits.push(op),
        updateFile: async (op) => void edits.push(op),
        deleteFile: async (op) => void edits.push(op),
      },
    });
    fake.script(
      { toolCalls: [{ id: 'call_1', name: 'shell', arguments: { commands: ['ls', 'pwd'] } }] },
      {
        toolCalls: [
          { id: 'call_2', name: 'apply_patch', arguments: { type: 'create_file', path: 'notes.md', diff: '+# Notes' } },
        ],
      },
      { reply: 'Listed the folder and wrote notes.md.' },
    );
    const agent = new Agent({ name: 'coder', model: 'svc-oracle', tools: [shell, patch] });
    const result = await runner.run(agent, 'Look around, then write notes.md');

    expect(result.finalOutput).toBe('Listed the folder and wrote notes.md.');
    expect(ran).toEqual([expect.objectContaining({ commands: ['ls', 'pwd'] })]);
    expect(edits).toEqual([expect.objectContaining({ type: 'create_file', path: 'notes.md', diff: '+# Notes' })]);
    expect(fake.chats).toHaveLength(3);
    // The lane read each tool's output as the answer to its call.
    expect(sentMessages(1).at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_1',
      content: '[command 1] exit code 0\nstdout:\nran ls\n\n[command 2] exit code 0\nstdout:\nran pwd',
    });
    expect(sentMessages(2).at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_2', content: 'completed' });
  });

  test('streamed: the SDK reads our event stream, runs the shell call, and streams the answer', async () => {
    const ran: string[][] = [];
    const shell = shellTool({
      shell: {
        run: async (action) => {
          ran.push(action.commands);
          return { output: [{ stdout: 'v24', stderr: '', outcome: { type: 'exit' as const, exitCode: 0 } }] };
        },
      },
    });
    fake.script(
      { toolCalls: [{ id: 'call_s', name: 'shell', arguments: { commands: ['node --version'] } }] },
      { reply: 'Node 24 is installed.', chunkDelayMs: 2 },
    );
    const agent = new Agent({ name: 'coder', model: 'svc-oracle', tools: [shell] });
    const stream = await runner.run(agent, 'Which Node?', { stream: true });
    const deltas: string[] = [];
    for await (const e of stream)
      if (e.type === 'raw_model_stream_event' && e.data.type === 'output_text_delta') deltas.push(e.data.delta);
    await stream.completed;
    expect(stream.finalOutput).toBe('Node 24 is installed.');
    expect(deltas.join('')).toBe('Node 24 is installed.');
    expect(ran).toEqual([['node --version']]);
  });

  test('ComputerTool: the SDK performs the action and its screenshot reaches the lane as an image', async () => {
    const png = (
      await sharp({ create: { width: 16, height: 16, channels: 3, background: '#123456' } })
        .png()
        .toBuffer()
    ).toString('base64');
    const actions: string[] = [];
    const computer: Computer = {
      environment: 'browser',
      dimensions: [800, 600],
      screenshot: async () => png,
      click: async (x, y, button) => void actions.push(`click ${x},${y} ${button}`),
      doubleClick: async (x, y) => void actions.push(`double_click ${x},${y}`),
      scroll: async (x, y, sx, sy) => void actions.push(`scroll ${x},${y} ${sx},${sy}`),
      type: async (text) => void actions.push(`type ${text}`),
      wait: async () => void actions.push('wait'),
      move: async (x, y) => void actions.push(`move ${x},${y}`),
      keypress: async (keys) => void actions.push(`keypress ${keys.join('+')}`),
      drag: async (path) => void actions.push(`drag ${path.length}`),
    };
    fake.script(
      {
        // A lane other than OpenAI's preview model gets the GA computer tool from the SDK: a list of actions a call.
        toolCalls: [
          {
            id: 'call_c',
            name: 'computer',
            arguments: {
              actions: [
                { type: 'click', x: 40, y: 50 },
                { type: 'type', text: 'hi' },
              ],
            },
          },
        ],
      },
      { reply: 'Clicked the button.' },
    );
    const agent = new Agent({
      name: 'operator',
      model: 'svc-oracle',
      tools: [computerTool({ computer })],
      modelSettings: { truncation: 'auto' },
    });
    const result = await runner.run(agent, 'Click the button');
    expect(result.finalOutput).toBe('Clicked the button.');
    expect(fake.chats[0].body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['computer']);
    expect(actions).toEqual(['click 40,50 left', 'type hi']);
    const sent = sentMessages();
    expect(sent.at(-2)).toMatchObject({ role: 'tool', tool_call_id: 'call_c' });
    expect(sent.at(-1).role).toBe('user');
    expect(sent.at(-1).content[1].image_url.url).toMatch(/^data:image\/(png|jpeg);base64,/);
  });

  test('hostedMcpTool: a call made at once (never), and one the SDK approves (always, onApproval), on a real MCP server', async () => {
    const server = { serverLabel: 'calc', serverUrl: peer.url };
    fake.script({ toolCalls: [{ id: 'call_m1', name: 'calc__add', arguments: { a: 2, b: 3 } }] }, { reply: 'Five.' });
    const direct = new Agent({
      name: 'calc',
      model: 'svc-oracle',
      tools: [hostedMcpTool({ ...server, requireApproval: 'never' })],
    });
    expect((await runner.run(direct, 'Add 2 and 3')).finalOutput).toBe('Five.');
    expect(peer.toolCalls).toEqual([{ name: 'add', arguments: { a: 2, b: 3 } }]);
    // The lane read the server's answer as the call's result.
    expect(sentMessages().at(-1)).toMatchObject({ role: 'tool', content: '5' });

    peer.reset();
    const asked: string[] = [];
    fake.script({ toolCalls: [{ id: 'call_m2', name: 'calc__add', arguments: { a: 4, b: 4 } }] }, { reply: 'Eight.' });
    const approving = new Agent({
      name: 'calc',
      model: 'svc-oracle',
      tools: [
        hostedMcpTool({
          ...server,
          requireApproval: 'always',
          onApproval: async (_ctx, item) => {
            asked.push(item.toolName ?? '');
            return { approve: true };
          },
        }),
      ],
    });
    expect((await runner.run(approving, 'Add 4 and 4')).finalOutput).toBe('Eight.');
    expect(asked).toEqual(['add']);
    // Approved once, made once.
    expect(peer.toolCalls).toEqual([{ name: 'add', arguments: { a: 4, b: 4 } }]);
  });

  test('imageGenerationTool: the run gets the image as an image_generation_call, and sends it back on the next turn', async () => {
    fake.script(
      { toolCalls: [{ id: 'call_g1', name: 'image_generation', arguments: { prompt: 'A lighthouse at dusk' } }] },
      {},
      { reply: 'Here is your lighthouse.' },
    );
    const agent = new Agent({
      name: 'painter',
      model: 'svc-oracle',
      tools: [imageGenerationTool({ quality: 'low', outputFormat: 'png' })],
    });
    const result = await runner.run(agent, 'Draw a lighthouse.');
    expect(result.finalOutput).toBe('Here is your lighthouse.');
    // The SDK reads our item as its hosted tool call, the image as its output.
    const made = result.newItems.map((i) => i.rawItem as any).find((r) => r.type === 'hosted_tool_call');
    expect(made).toMatchObject({ name: 'image_generation_call', status: 'completed', output: FAKE_PNG_B64 });
    expect(made.providerData).toMatchObject({ quality: 'low', revised_prompt: 'fake: A lighthouse at dusk' });
    const images = fake.requests.filter((r) => r.path.endsWith('/images/generations'));
    expect(images.map((r) => r.body.prompt)).toEqual(['A lighthouse at dusk']);

    // The next turn resends the history, the image call with it: the lane reads it as the call it made.
    fake.script({ reply: 'It is a lighthouse.' });
    const next = await runner.run(agent, [...result.history, { role: 'user', content: 'What did you draw?' }]);
    expect(next.finalOutput).toBe('It is a lighthouse.');
    const sent = sentMessages();
    expect(sent.map((m: any) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    expect(sent[1].tool_calls[0].function.name).toBe('image_generation');
    expect(JSON.stringify(sent)).not.toContain(FAKE_PNG_B64);
  });
});
