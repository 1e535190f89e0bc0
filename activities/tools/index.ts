// The tool registry's public face for other rooms (plans, agents, workspaces, MCP).
export { findTool, mayUse, runTool, toolJsonSchemas, toolRegistry, toolsFor, type ToolOutcome } from './registry';
export { buildWorkerToolContext, toolAppContext } from './context';
export type { ToolContext, ToolDef, ToolDeps } from './types';
