import { endpointsA } from './registry-A';
import { endpointsB } from './registry-B';
import { endpointsC } from './registry-C';
import type { ReasoningEndpoint } from './types';

/** Every structured-reasoning endpoint; the API mounts each entry at POST /v1<path>. */
export function reasoningEndpoints(): ReasoningEndpoint[] {
  return [...endpointsA, ...endpointsB, ...endpointsC];
}
