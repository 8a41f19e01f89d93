// Typed errors: one class per refusal code of docs/api.md ("Codes"), plus the client's own
// (lease lost, gateway unreachable, a reply that is not the gateway's). Each carries what the
// caller needs to act and to ask about it: the code, the HTTP status, the problem body and the
// X-Request-Id the request was sent with (the gateway's, when it answered).

export interface ErrorDetails {
  status?: number | null;
  problem?: Record<string, unknown> | null;
  requestId?: string | null;
  headers?: Headers | null;
  cause?: unknown;
}

/** Base of every error the client throws about a request. */
export class GatewayError extends Error {
  /** The gateway code (Gateway-Status), or the client's own code for client-side errors. */
  readonly code: string;
  /** HTTP status of the reply; null when no reply was received. */
  readonly status: number | null;
  /** The RFC 9457 problem body, when the reply had one. */
  readonly problem: Record<string, unknown> | null;
  /** X-Request-Id of the reply, or the one the request was sent with. */
  readonly requestId: string | null;
  readonly headers: Headers | null;

  constructor(code: string, message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.code = code;
    this.status = details.status ?? null;
    this.problem = details.problem ?? null;
    this.requestId = details.requestId ?? null;
    this.headers = details.headers ?? null;
  }
}

type Ctor = new (message: string, details?: ErrorDetails) => GatewayError;

function codeClass(code: string): Ctor {
  return class extends GatewayError {
    constructor(message: string, details: ErrorDetails = {}) {
      super(code, message, details);
    }
  };
}

// Ownership.
export class BusyError extends codeClass('busy') {}
export class StaleOwnerError extends codeClass('stale_owner') {}
export class ExpiredOwnerError extends codeClass('expired_owner') {}
export class AuthorityGenerationMismatchError extends codeClass('authority_generation_mismatch') {}
export class ScopeMismatchError extends codeClass('scope_mismatch') {}
export class InvalidGrantError extends codeClass('invalid_grant') {}
export class EpochExhaustedError extends codeClass('epoch_exhausted') {}
// Requests.
export class InvalidRequestError extends codeClass('invalid_request') {}
export class UnauthenticatedError extends codeClass('unauthenticated') {}
export class ForbiddenError extends codeClass('forbidden') {}
export class NotFoundError extends codeClass('not_found') {}
export class MethodNotAllowedError extends codeClass('method_not_allowed') {}
export class PayloadTooLargeError extends codeClass('payload_too_large') {}
export class MissingIdempotencyKeyError extends codeClass('missing_idempotency_key') {}
export class MissingExpectedVersionError extends codeClass('missing_expected_version') {}
// The ledger.
export class OperationConflictError extends codeClass('operation_conflict') {}
export class OperationInFlightError extends codeClass('operation_in_flight') {}
export class UnresolvedOperationError extends codeClass('unresolved_operation') {}
export class VersionConflictError extends codeClass('version_conflict') {}
export class VersionExhaustedError extends codeClass('version_exhausted') {}
export class ResolvedWithoutReplyError extends codeClass('resolved_without_reply') {}
export class OperationNotHeldError extends codeClass('operation_not_held') {}
// Availability.
export class AuthorityUnavailableError extends codeClass('authority_unavailable') {}
export class ProviderUnavailableError extends codeClass('provider_unavailable') {}
export class InternalError extends codeClass('internal_error') {}
export class AuthorityClockRollbackError extends codeClass('authority_clock_rollback') {}

/**
 * rejected_by_provider: the provider refused the mutation definitively (a 4xx by default). The
 * provider's reply is in `body`; nothing changed at the provider and the task's version did not move.
 */
export class RejectedByProviderError extends GatewayError {
  readonly body: Uint8Array | null;
  readonly replayed: boolean;
  constructor(message: string, details: ErrorDetails & { body?: Uint8Array | null; replayed?: boolean } = {}) {
    super('rejected_by_provider', message, details);
    this.body = details.body ?? null;
    this.replayed = details.replayed ?? false;
  }
  text(): string {
    return this.body === null ? '' : new TextDecoder().decode(this.body);
  }
}

/** Client-side: the lease may be over, so nothing was sent. */
export class LeaseLostError extends GatewayError {
  constructor(message: string, details: ErrorDetails = {}) {
    super('lease_lost', message, details);
  }
}

/** Client-side: the gateway could not be reached; nothing was sent (a connect failure). */
export class GatewayUnreachableError extends GatewayError {
  constructor(message: string, details: ErrorDetails = {}) {
    super('gateway_unreachable', message, details);
  }
}

/** Client-side: a reply without a Gateway-Status the client knows (e.g. from a proxy in between). */
export class UnexpectedReplyError extends GatewayError {
  constructor(message: string, details: ErrorDetails = {}) {
    super('unexpected_reply', message, details);
  }
}

const BY_CODE: Record<string, Ctor> = {
  busy: BusyError,
  stale_owner: StaleOwnerError,
  expired_owner: ExpiredOwnerError,
  authority_generation_mismatch: AuthorityGenerationMismatchError,
  scope_mismatch: ScopeMismatchError,
  invalid_grant: InvalidGrantError,
  epoch_exhausted: EpochExhaustedError,
  invalid_request: InvalidRequestError,
  unauthenticated: UnauthenticatedError,
  forbidden: ForbiddenError,
  not_found: NotFoundError,
  method_not_allowed: MethodNotAllowedError,
  payload_too_large: PayloadTooLargeError,
  missing_idempotency_key: MissingIdempotencyKeyError,
  missing_expected_version: MissingExpectedVersionError,
  operation_conflict: OperationConflictError,
  operation_in_flight: OperationInFlightError,
  unresolved_operation: UnresolvedOperationError,
  version_conflict: VersionConflictError,
  version_exhausted: VersionExhaustedError,
  resolved_without_reply: ResolvedWithoutReplyError,
  operation_not_held: OperationNotHeldError,
  authority_unavailable: AuthorityUnavailableError,
  provider_unavailable: ProviderUnavailableError,
  internal_error: InternalError,
  authority_clock_rollback: AuthorityClockRollbackError,
};

/** The refusal codes this client has a class for (unknown_outcome and rejected_by_provider have their own). */
export const REFUSAL_CODES: readonly string[] = Object.keys(BY_CODE);

/** The typed error for a gateway refusal; an unknown code is an UnexpectedReplyError. */
export function errorForCode(code: string, details: ErrorDetails): GatewayError {
  const ctor = BY_CODE[code];
  const detail = typeof details.problem?.['detail'] === 'string' ? `: ${details.problem['detail']}` : '';
  if (ctor === undefined) {
    return new UnexpectedReplyError(`the gateway answered ${details.status ?? '?'} with unknown code ${JSON.stringify(code)}`, details);
  }
  return new ctor(`${code} (HTTP ${details.status ?? '?'})${detail}`, details);
}

/** Codes that mean this grant can no longer act: the task handle's lease is over. */
export function endsLease(code: string): boolean {
  return (
    code === 'stale_owner' ||
    code === 'expired_owner' ||
    code === 'authority_generation_mismatch' ||
    code === 'invalid_grant' ||
    code === 'scope_mismatch'
  );
}
