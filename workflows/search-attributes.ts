import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Search attributes on every workflow, so operators can filter the Temporal UI by tenant and kind. */
export const SvcTenant = defineSearchAttributeKey('SvcTenant', SearchAttributeType.KEYWORD);
export const SvcKind = defineSearchAttributeKey('SvcKind', SearchAttributeType.KEYWORD);
export const SvcSurface = defineSearchAttributeKey('SvcSurface', SearchAttributeType.KEYWORD);
