// What a tool call came to, as the tool result the model reads: whether the effect is committed,
// replayed, rejected by the provider, unknown and held, or did not happen, and what to tell the
// user. Pure: a function of the client's result or error.

import {
  GatewayError,
  LeaseLostError,
  MutationResult,
  OutcomeUnknownError,
  RejectedByProviderError,
} from 'write-gateway-client';

export type Effect = 'committed' | 'replayed' | 'rejected_by_provider' | 'unknown_held' | 'not_executed';

export interface ToolOutcome {
  effect: Effect;
  operation_id: string;
  tell_user: string;
  committed_version?: number;
  provider_status?: number | null;
  provider_body?: unknown;
  code?: string;
  detail?: string;
  request_id?: string | null;
}

function body(bytes: Uint8Array | null): unknown {
  if (bytes === null || bytes.length === 0) return null;
  const text = new TextDecoder().decode(bytes);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function fromResult(operationId: string, r: MutationResult): ToolOutcome {
  const replayed = r.replayed;
  return {
    effect: replayed ? 'replayed' : 'committed',
    operation_id: operationId,
    committed_version: r.committedVersion,
    provider_status: r.status,
    provider_body: body(r.body),
    request_id: r.requestId,
    tell_user: replayed
      ? 'This action had already been done earlier (same request); it was not done again. Report the earlier result.'
      : r.receipt !== null
        ? 'Done: the provider carried it out (confirmed from the gateway\'s record after the reply was lost).'
        : 'Done: the provider carried it out.',
  };
}

export function fromError(operationId: string, error: unknown): ToolOutcome {
  if (error instanceof OutcomeUnknownError) {
    return {
      effect: 'unknown_held',
      operation_id: operationId,
      code: error.code,
      detail: error.message,
      request_id: error.requestId,
      tell_user:
        'The request was sent, but whether the provider carried it out is not known yet. The gateway holds it and will never send it again. ' +
        'Tell the user it is pending confirmation; do not retry it with a new intent_id. Calling this tool again with the same arguments reports the outcome once it is known.',
    };
  }
  if (error instanceof RejectedByProviderError) {
    return {
      effect: 'rejected_by_provider',
      operation_id: operationId,
      code: error.code,
      provider_status: error.status,
      provider_body: body(error.body),
      request_id: error.requestId,
      tell_user: 'The provider refused this request; nothing was changed. Tell the user why (provider_body) and ask how to proceed.',
    };
  }
  const code = error instanceof GatewayError ? error.code : 'error';
  const lease = error instanceof LeaseLostError || code === 'stale_owner' || code === 'expired_owner';
  return {
    effect: 'not_executed',
    operation_id: operationId,
    code,
    detail: error instanceof Error ? error.message : String(error),
    request_id: error instanceof GatewayError ? error.requestId : null,
    tell_user: lease
      ? 'Nothing was done: this server no longer held the task (its lease ran out or was taken over), so the request was not sent. The task may have changed meanwhile; check before trying again.'
      : code === 'authority_unavailable' || code === 'gateway_unreachable'
        ? 'Nothing was done: the gateway could not confirm it safely right now. It is safe to call again with the same arguments later.'
        : 'Nothing was done: the gateway refused the request (see code and detail).',
  };
}
