/**
 * The error catalogue: every code the service answers with, its HTTP status, whether retrying can
 * help, and its default message. The spec's codes keep their names; codes the spec does not list
 * follow its pattern and are documented in docs/errors.md. Nothing outside this file invents a
 * status for a code.
 *
 * `retryable` is what an activity's retry policy (and a client) may conclude: a dependency that is
 * down (5xx) or a rate limit that refills (the 429s with a `retryAfter`) can pass on a later try;
 * a validation, not-found, permission or spent-quota answer fails the same way every time.
 * activities/failure.ts turns it into the ApplicationFailure's `nonRetryable`.
 */

export const ERRORS = {
  // --- generic request errors (new codes, spec pattern) ---
  /** Body is not valid JSON. */
  ERR_REQ_001: { status: 400, retryable: false, message: 'Malformed JSON body' },
  /** Body larger than the configured limit. */
  ERR_REQ_002: { status: 413, retryable: false, message: 'Request body too large' },
  /** No route matches method and path. */
  ERR_REQ_003: { status: 404, retryable: false, message: 'Route not found' },
  /** Body or query parameter failed validation (every problem in relatedInfo.errors; docs/errors.md "Validation errors"). */
  ERR_VALID_001: { status: 400, retryable: false, message: 'Invalid request parameters' },
  /** Plain HTTP refused in production. */
  ERR_REQ_004: { status: 400, retryable: false, message: 'HTTPS is required' },
  /** JSON body nested deeper than the service reads (docs/security.md). */
  ERR_REQ_005: { status: 400, retryable: false, message: 'JSON body nested too deeply' },
  /** A known path asked with a method it does not take; the `Allow` header lists those it does (docs/errors.md "Methods and content types"). */
  ERR_REQ_006: { status: 405, retryable: false, message: 'Method not allowed' },
  /** A body of a content type the route does not take (`relatedInfo.received`, `relatedInfo.accepted`; docs/errors.md "Methods and content types"). */
  ERR_REQ_007: { status: 415, retryable: false, message: 'Unsupported content type' },
  /** A method the service takes on no path (PROPFIND, TRACE, …) asked of a known path; `Allow` lists those it takes (docs/errors.md "Methods and content types"). */
  ERR_REQ_008: { status: 501, retryable: false, message: 'Method not implemented' },
  /** The Idempotency-Key was first used with another request: another body, path or method (docs/idempotency.md). */
  ERR_IDEM_001: { status: 422, retryable: false, message: 'Idempotency-Key already used for a different request' },
  /** The first request with this Idempotency-Key is still in flight (`retryAfter`); a repeat then gets its answer. */
  ERR_IDEM_002: { status: 409, retryable: true, message: 'A request with this Idempotency-Key is in progress' },
  /** Unexpected failure; details are only in the log, under the request id. */
  ERR_INTERNAL_001: { status: 500, retryable: true, message: 'Internal server error' },
  /** A dependency (database, Temporal, storage) is not reachable. */
  ERR_INTERNAL_002: { status: 503, retryable: true, message: 'Service temporarily unavailable' },

  // --- API keys ---
  /** API key id unknown in the caller's project. */
  ERR_AKEY_001: { status: 404, retryable: false, message: 'API key not found' },
  /** Bearer looks like an API key but matches none. */
  ERR_AKEY_002: { status: 401, retryable: false, message: 'Invalid API key' },
  /** Key exists but was revoked or deactivated. */
  ERR_AKEY_003: { status: 401, retryable: false, message: 'API key is deactivated' },
  /** Key lacks the flag an endpoint needs. */
  ERR_AKEY_004: { status: 403, retryable: false, message: 'This API key has no permission for this action' },

  // --- authentication ---
  /** Wrong email or password at login. */
  ERR_AUTH_001: { status: 401, retryable: false, message: 'Invalid email or password' },
  /** Current password wrong on change-password, 2FA disable, deletion. */
  ERR_AUTH_002: { status: 400, retryable: false, message: 'Invalid current password' },
  /** No credential on an endpoint that needs one. */
  ERR_AUTH_003: { status: 401, retryable: false, message: 'Authentication required' },
  /** JWT malformed, expired or signed by another key; refresh token unknown or used. */
  ERR_AUTH_004: { status: 401, retryable: false, message: 'Invalid or expired token' },
  /** Credential valid but not allowed here (kind, role or permission). */
  ERR_AUTH_005: { status: 403, retryable: false, message: 'You do not have permission for this action' },
  /** Operation needs a verified email address. */
  ERR_AUTH_006: { status: 403, retryable: false, message: 'Email address not verified' },
  /** Verification or password-reset token unknown, used or expired. */
  ERR_AUTH_007: { status: 400, retryable: false, message: 'Invalid or expired token' },
  /** TOTP or backup code missing or wrong. */
  ERR_AUTH_012: { status: 401, retryable: false, message: 'Invalid two-factor authentication code' },
  /** 2FA enable called while 2FA is already on: disable first, so a session alone cannot swap the seed. */
  ERR_AUTH_013: { status: 409, retryable: false, message: 'Two-factor authentication is already enabled' },
  /** 2FA verify without a started setup, or backup codes asked for while 2FA is off. */
  ERR_AUTH_014: { status: 409, retryable: false, message: 'Two-factor authentication is not enabled' },
  /** Sign-in step (password, second factor, restore) locked after repeated failures; relatedInfo.retryAfter seconds. */
  ERR_AUTH_015: { status: 429, retryable: true, message: 'Too many failed attempts; try again later' },
  /** Reset or verification e-mails asked for too often for this address or account; relatedInfo.retryAfter seconds. */
  ERR_AUTH_016: { status: 429, retryable: true, message: 'Too many e-mails requested; try again later' },

  // --- validation of generation variables ---
  ERR_VALID_002: { status: 400, retryable: false, message: 'Variable validation failed' },
  ERR_VALID_005: { status: 400, retryable: false, message: 'Required field missing' },

  // --- templates ---
  ERR_TMPL_001: { status: 404, retryable: false, message: 'Template not found' },
  ERR_TMPL_002: { status: 404, retryable: false, message: 'Document template not found' },
  ERR_TMPL_003: { status: 404, retryable: false, message: 'Attachment template not found' },
  ERR_TMPL_004: { status: 403, retryable: false, message: 'No permission to access this template' },
  ERR_TMPL_005: { status: 403, retryable: false, message: 'No permission to edit this template' },
  ERR_TMPL_006: { status: 403, retryable: false, message: 'No permission to delete this template' },
  ERR_TMPL_007: { status: 403, retryable: false, message: 'No permission to view this template' },
  ERR_TMPL_008: { status: 400, retryable: false, message: 'Template schema validation failed' },
  ERR_TMPL_009: { status: 400, retryable: false, message: 'Invalid template type' },
  ERR_TMPL_010: { status: 400, retryable: false, message: 'Import data invalid' },
  ERR_TMPL_011: { status: 409, retryable: false, message: 'A template with the same name exists' },
  ERR_TMPL_012: { status: 500, retryable: true, message: 'Template export failed' },
  ERR_TMPL_013: { status: 404, retryable: false, message: 'Template version not found' },
  ERR_TMPL_014: { status: 400, retryable: false, message: 'Version does not belong to this template' },
  ERR_TMPL_015: { status: 400, retryable: false, message: 'No file uploaded for import' },
  ERR_TMPL_016: { status: 400, retryable: false, message: 'Invalid JSON file format' },
  ERR_TMPL_020: { status: 409, retryable: false, message: 'No draft version to publish' },
  ERR_TMPL_021: { status: 422, retryable: false, message: 'Template has no published version' },
  ERR_TMPL_022: { status: 404, retryable: false, message: 'Template has no draft version' },
  ERR_TMPL_023: { status: 400, retryable: false, message: 'Invalid version parameter' },

  // --- assets (images and fonts templates use, docs/templates.md "Assets and fonts") ---
  /** Asset id unknown in the caller's project. */
  ERR_ASSET_001: { status: 404, retryable: false, message: 'Asset not found' },
  /** The upload is none of PNG, JPEG, WebP, SVG, TTF, OTF, WOFF2 by its own bytes, or it is one but broken (`relatedInfo.reason`). */
  ERR_ASSET_002: { status: 400, retryable: false, message: 'File is not a supported image or font' },
  /** The upload is larger than its kind allows (`relatedInfo.limit` bytes). */
  ERR_ASSET_003: { status: 413, retryable: false, message: 'Asset is larger than allowed' },
  /** The project holds as many assets, or as many bytes of them, as it may (`relatedInfo.limit`). */
  ERR_ASSET_004: { status: 409, retryable: false, message: 'Asset storage of the project is full' },
  /** No file part in the upload. */
  ERR_ASSET_005: { status: 400, retryable: false, message: 'No file uploaded' },

  // --- quotas and limits ---
  ERR_QUOTA_003: { status: 429, retryable: true, message: 'Rate limit exceeded' },
  ERR_QUOTA_008: { status: 429, retryable: false, message: 'Monthly generation quota exceeded' },
  ERR_QUOTA_011: { status: 429, retryable: false, message: 'Insufficient document credits' },
  ERR_LIMIT_001: { status: 400, retryable: false, message: 'PDF page limit exceeded' },
  ERR_LIMIT_003: { status: 400, retryable: false, message: 'Excel row limit exceeded' },
  ERR_LIMIT_007: { status: 400, retryable: false, message: 'Loop iteration limit exceeded' },
  /** A template's calculated variables ran past the evaluation budget (time or memory; docs/security.md). */
  ERR_LIMIT_008: { status: 400, retryable: false, message: 'Expression evaluation budget exceeded' },
  /** The HTML a template produced is larger than RENDER_HTML_MAX_BYTES. */
  ERR_LIMIT_009: { status: 400, retryable: false, message: 'Rendered HTML size limit exceeded' },
  /** A custom render API answered with more than CUSTOM_RENDER_MAX_BYTES. */
  ERR_LIMIT_010: { status: 400, retryable: false, message: 'Custom render response too large' },
  /** The rendered file (PDF or XLSX) is larger than RENDER_OUTPUT_MAX_BYTES. */
  ERR_LIMIT_011: { status: 400, retryable: false, message: 'Rendered document size limit exceeded' },
  /** One address was sent as many approval links or verification e-mails as RESEND_PER_RECIPIENT_PER_HOUR allows. */
  ERR_LIMIT_012: { status: 429, retryable: true, message: 'Too many e-mails re-sent to this address; try again later' },
  /** One project re-sent as many approval e-mails as RESEND_PER_PROJECT_PER_HOUR allows. */
  ERR_LIMIT_013: { status: 429, retryable: true, message: 'Too many e-mails re-sent for this project; try again later' },
  /** One project asked for more template previews than PREVIEW_RATE_LIMIT_PER_MINUTE allows. */
  ERR_LIMIT_014: { status: 429, retryable: true, message: 'Preview rate limit exceeded for this project' },
  /** Datasource tests, schema refreshes and query previews running at once for one project (REPORTING_PROBES_PER_PROJECT). */
  ERR_LIMIT_015: { status: 429, retryable: true, message: 'Too many datasource calls running for this project; try again shortly' },
  /** A model import of the project being read, or the replica's import queue full (REPORTING_IMPORT_CONCURRENCY, REPORTING_IMPORT_QUEUE). */
  ERR_LIMIT_016: { status: 429, retryable: true, message: 'Too many imports being read; try again shortly' },
  /** A string in a document's variables longer than DOCUMENT_VARIABLE_MAX_CHARS, refused at acceptance (`relatedInfo.field`, `limit`). */
  ERR_LIMIT_017: { status: 400, retryable: false, message: 'Variable value too long' },
  /** A document's variables larger than DOCUMENT_VARIABLES_MAX_BYTES as JSON, refused at acceptance (`relatedInfo.field`, `limit`). */
  ERR_LIMIT_018: { status: 400, retryable: false, message: 'Variables too large' },

  // --- projects (teams) ---
  ERR_TEAM_001: { status: 404, retryable: false, message: 'Project not found' },
  ERR_TEAM_002: { status: 409, retryable: false, message: 'Slug already exists' },
  ERR_TEAM_003: { status: 403, retryable: false, message: 'Only the project owner can do this' },
  ERR_TEAM_004: { status: 400, retryable: false, message: 'Personal projects cannot be deleted directly' },
  ERR_TEAM_005: { status: 400, retryable: false, message: 'Personal project slug cannot change' },
  ERR_TEAM_006: { status: 400, retryable: false, message: 'Not a personal project' },
  ERR_TEAM_007: { status: 409, retryable: false, message: 'User is already a member' },
  ERR_TEAM_008: { status: 409, retryable: false, message: 'Invitation already sent' },
  ERR_TEAM_009: { status: 404, retryable: false, message: 'Invitation not found' },
  ERR_TEAM_010: { status: 410, retryable: false, message: 'Invitation expired' },
  ERR_TEAM_011: { status: 404, retryable: false, message: 'Project member not found' },
  ERR_TEAM_012: { status: 400, retryable: false, message: 'You cannot remove yourself' },
  /** PATCH /api/teams/members/:id/role aimed at the owner (new code): a project keeps exactly one owner. */
  ERR_TEAM_013: { status: 400, retryable: false, message: "The project owner's role cannot be changed" },

  // --- users ---
  ERR_USER_001: { status: 404, retryable: false, message: 'User not found' },
  ERR_USER_002: { status: 409, retryable: false, message: 'Email already exists' },
  ERR_USER_003: { status: 400, retryable: false, message: 'Invalid email format' },
  ERR_USER_004: { status: 403, retryable: false, message: 'Account pending deletion; it can be restored' },
  ERR_USER_005: { status: 403, retryable: false, message: 'Account deletion in progress' },
  ERR_USER_006: { status: 400, retryable: false, message: 'Account restore failed' },
  ERR_USER_007: { status: 400, retryable: false, message: 'Account is not deleted and cannot be restored' },
  /** Avatar not valid base64, or its bytes are not a JPEG, PNG or WebP image (checked by content). */
  ERR_USER_008: { status: 400, retryable: false, message: 'Image must be a JPEG, PNG or WebP file' },
  /** Avatar larger than AVATAR_MAX_BYTES once decoded. */
  ERR_USER_009: { status: 413, retryable: false, message: 'Image is too large' },
  /** GET /api/users/me/avatar without a picture (new code). */
  ERR_USER_010: { status: 404, retryable: false, message: 'No profile picture' },

  // --- Flow ---
  'FLOW.GATE_NOT_FOUND': { status: 404, retryable: false, message: 'Gate not found' },
  'FLOW.GATE_PAUSED': { status: 409, retryable: false, message: 'Gate is not active' },
  'FLOW.GATE_VALIDATION_FAILED': { status: 422, retryable: false, message: 'Schema or rule definitions invalid' },
  'FLOW.RUN_NOT_FOUND': { status: 404, retryable: false, message: 'Run not found' },
  'FLOW.APPROVAL_NOT_FOUND': { status: 404, retryable: false, message: 'Approval not found' },
  'FLOW.APPROVAL_ALREADY_DECIDED': { status: 409, retryable: false, message: 'Decision already recorded' },
  'FLOW.DELIVERY_NOT_FOUND': { status: 404, retryable: false, message: 'Delivery not found' },
  'FLOW.DELIVERY_ALREADY_COMPLETED': { status: 409, retryable: false, message: 'Cannot retry a completed delivery' },
  'FLOW.TEMPLATE_NOT_FOUND': { status: 404, retryable: false, message: 'Template not found for schema import' },
  'FLOW.TEMPLATE_HAS_NO_VARIABLES': { status: 422, retryable: false, message: 'Template has no variables to import' },
  ERR_FLOW_RUN_003: { status: 503, retryable: true, message: 'Circuit breaker open' },
  ERR_FLOW_RUN_004: { status: 429, retryable: true, message: 'Rate limit exceeded' },
  ERR_FLOW_RUN_005: { status: 413, retryable: false, message: 'Payload exceeds 1 MB' },

  // --- artefact downloads and outbound requests (new codes, spec pattern; storage and http adapters) ---
  /** Signed download link is valid but no stored artefact has that key (deleted, or never written). */
  ERR_FILE_001: { status: 404, retryable: false, message: 'File not found' },
  /** Signed download link whose `expires` time has passed; a fresh status read mints a new one. */
  ERR_FILE_002: { status: 403, retryable: false, message: 'Download link expired' },
  /** Download link whose signature does not match its key, expiry or filename (edited or forged). */
  ERR_FILE_003: { status: 403, retryable: false, message: 'Invalid download link signature' },
  /** Webhook, render-API or image URL that is not http(s), does not resolve, or resolves to a
   * loopback, private, link-local or otherwise internal address not in OUTBOUND_ALLOWLIST. */
  ERR_OUTBOUND_001: { status: 400, retryable: false, message: 'Outbound address not allowed' },

  // --- document webhooks (new codes, spec pattern; /api/webhooks) ---
  /** Subscription id unknown, deleted, or of another project. */
  ERR_WEBHOOK_001: { status: 404, retryable: false, message: 'Webhook subscription not found' },
  /** Delivery id unknown, of another project, or of a deleted subscription (Flow answers FLOW.DELIVERY_NOT_FOUND). */
  ERR_WEBHOOK_002: { status: 404, retryable: false, message: 'Webhook delivery not found' },
  /** Manual retry of a delivery that already succeeded (Flow answers FLOW.DELIVERY_ALREADY_COMPLETED). */
  ERR_WEBHOOK_003: { status: 409, retryable: false, message: 'Cannot retry a completed delivery' },
  /** Test event or manual retry for a subscription switched off with `isActive: false`. */
  ERR_WEBHOOK_004: { status: 409, retryable: false, message: 'Webhook subscription is inactive' },
  /** Manual retry of a delivery that is still pending or waiting for its next automatic attempt. */
  ERR_WEBHOOK_005: { status: 409, retryable: false, message: 'Delivery is still in progress' },
  /** A project already has the most subscriptions allowed (25): each one multiplies every event. */
  ERR_WEBHOOK_006: { status: 400, retryable: false, message: 'Webhook subscription limit reached' },
  // --- document jobs and batches (new codes, spec pattern; /api/documents) ---
  /** Job id unknown or of another project. */
  ERR_JOB_001: { status: 404, retryable: false, message: 'Document job not found' },
  /** Retry of a job that did not fail (only failed jobs can be retried). */
  ERR_JOB_002: { status: 409, retryable: false, message: 'Only failed jobs can be retried' },
  /** Cancel of a job that has already ended (completed, failed or cancelled). */
  ERR_JOB_003: { status: 409, retryable: false, message: 'The job has already ended' },
  /** Batch id unknown or of another project. */
  ERR_BATCH_001: { status: 404, retryable: false, message: 'Batch not found' },
  // --- Flow plan limits (new codes, spec pattern; spec Limits §7, by the project's plan) ---
  /** Creating a gate past the plan's maximum (Free: 3); deleted gates do not count. */
  ERR_FLOW_LIMIT_001: { status: 403, retryable: false, message: "Your plan's gate limit is reached" },
  /** A run submitted past the plan's monthly runs on a plan without overage (Free: 500 per UTC month). */
  ERR_FLOW_LIMIT_002: { status: 429, retryable: false, message: "Your plan's monthly run limit is reached" },
  /** A payload longer than the plan's content limit in characters (Free: 50,000), under the 1 MB cap. */
  ERR_FLOW_LIMIT_003: { status: 413, retryable: false, message: "Payload exceeds your plan's content limit" },
  /** An approvalConfig with more approvers than the plan allows per gate (Free: 5). */
  ERR_FLOW_LIMIT_004: { status: 403, retryable: false, message: "Your plan's approver limit per gate is exceeded" },
  // --- Flow approvals and review (new codes, spec pattern; docs/flow.md "Approvals") ---
  /** Resend of approval e-mails for a run that is not waiting in `review_required`. */
  'FLOW.RUN_NOT_IN_REVIEW': { status: 409, retryable: false, message: 'Run is not awaiting review' },
  /** Review authenticate or resend with a magic-link token that is unknown, expired, of a decided
   * approval, or given with an e-mail that is not the approver's (one answer, so nothing is probed). */
  'FLOW.REVIEW_LINK_INVALID': { status: 401, retryable: false, message: 'Review link is invalid or has expired' },
  /** A review token (`fmrv_…`) that is unknown, expired, or revoked because its approvals were decided. */
  'FLOW.REVIEW_TOKEN_INVALID': { status: 401, retryable: false, message: 'Review session is invalid or has expired' },
  // --- Reporting (docs/reporting.md; docs/errors.md "Errors") ---
  /** Another project's datasource answers the same. */
  ERR_DS_001: { status: 404, retryable: false, message: 'Datasource not found' },
  /** A datasource whose config fails its kind's rules (`relatedInfo.errors`); also a connection the outbound guard or the driver refuses at test time. */
  ERR_DS_002: { status: 400, retryable: false, message: 'Datasource configuration invalid' },
  ERR_DS_003: { status: 409, retryable: false, message: 'A datasource with the same name exists' },
  /** Delete of a datasource that query objects still use (`relatedInfo.queries`: how many); delete or move them first. */
  ERR_DS_004: { status: 409, retryable: false, message: 'Datasource is used by query objects' },
  /** `sqlite` without an agent, or a kind the chosen mode does not serve. */
  ERR_DS_005: { status: 400, retryable: false, message: 'This kind cannot use this connection mode' },
  ERR_DS_006: { status: 400, retryable: false, message: 'Agent not found or not in this project' },
  ERR_DS_007: { status: 400, retryable: false, message: 'Sealed secrets need an agent whose public key an admin has confirmed' },
  ERR_DS_008: { status: 404, retryable: false, message: 'Schema not discovered yet' },
  /** A change of where the datasource connects (`relatedInfo.changed`) drops its stored secrets; `relatedInfo.missing` names those to give again in the same request. Nothing is stored. */
  ERR_DS_009: { status: 400, retryable: false, message: 'Changing the datasource target needs its secrets again' },
  /** `secretMode: stored` (or a new stored secret) for an agent that has a public key: its secrets are sealed to it (`sealed` or `agent_local`). */
  ERR_DS_010: { status: 400, retryable: false, message: 'This agent has a confirmed public key: secrets must be sealed to it, not stored' },
  /** Another project's query object, or a deleted one, answers the same. */
  ERR_QRY_001: { status: 404, retryable: false, message: 'Query object not found' },
  /** Query text that breaks the query rules (`relatedInfo.errors: [{path, code, message}]`, codes `MULTIPLE_STATEMENTS`, `PLACEHOLDER_IN_LITERAL`, `UNKNOWN_PARAMETER`, `NOT_A_READ`, ...; docs/reporting.md). */
  ERR_QRY_002: { status: 400, retryable: false, message: 'Query invalid' },
  /** Publish of a draft identical to the latest version (`relatedInfo.latestVersion`). */
  ERR_QRY_003: { status: 409, retryable: false, message: 'No changes to publish' },
  ERR_QRY_004: { status: 404, retryable: false, message: 'Query version not found' },
  /** The database refused or failed the statement (`relatedInfo.dbCode`: SQLSTATE or MySQL error number); the database's own message is not passed on. */
  ERR_QRY_006: { status: 422, retryable: false, message: 'Query failed in the database' },
  /** The statement ran past its `timeoutSeconds` and the database cancelled it. */
  ERR_QRY_007: { status: 422, retryable: false, message: 'Query timed out' },
  /** More rows than `maxRows` with `onRowLimit: fail` (`relatedInfo.limit`). */
  ERR_QRY_008: { status: 422, retryable: false, message: 'Row limit exceeded' },
  /** A statement that is not a read (INSERT, COPY, CALL, SET, SELECT ... INTO, a writable CTE, a second statement), refused by the rules or by the read-only transaction. */
  ERR_QRY_009: { status: 422, retryable: false, message: 'Only read statements may run' },
  /** The result passed `REPORTING_RESULT_MAX_BYTES` (uncompressed NDJSON) while it streamed (`relatedInfo.limit`). */
  ERR_QRY_010: { status: 413, retryable: false, message: 'Result too large' },
  /** A live query object of the project already has this name (case-insensitive). */
  ERR_QRY_012: { status: 409, retryable: false, message: 'Query object is pinned by a published report' },
  ERR_QRY_013: { status: 409, retryable: false, message: 'A query object with the same name exists' },
  ERR_RPT_001: { status: 404, retryable: false, message: 'Report not found' },
  ERR_RPT_002: { status: 404, retryable: false, message: 'Report version not found' },
  ERR_RPT_003: { status: 422, retryable: false, message: 'Report has no published version' },
  /** Publish of a draft whose resolved definition equals the latest version (`relatedInfo.latestVersion`). */
  ERR_RPT_004: { status: 409, retryable: false, message: 'No changes to publish' },
  /** Every problem of a report's definition at once (`relatedInfo.errors: [{path, message}]`; docs/reporting.md "Reports"). */
  ERR_RPT_005: { status: 400, retryable: false, message: 'Report definition invalid' },
  /** A live report of the project already has this name (case-insensitive). */
  ERR_RPT_006: { status: 409, retryable: false, message: 'A report with the same name exists' },
  /** A report or query parameter value of the wrong type or missing (`relatedInfo.field`), the shape of `ERR_VALID_002`. */
  ERR_RPT_007: { status: 400, retryable: false, message: 'Invalid report parameters' },
  /** Cancel of a run that is delivering or has ended (deliveries under way finish). */
  ERR_RPT_008: { status: 409, retryable: false, message: 'The run can no longer be cancelled' },
  ERR_RPT_009: { status: 404, retryable: false, message: 'Run not found' },
  ERR_RPT_010: { status: 409, retryable: false, message: 'Only failed runs can be retried' },
  ERR_RPT_011: { status: 404, retryable: false, message: 'Output not found' },
  /** The output's file was deleted after REPORTING_ARTEFACT_RETENTION_DAYS. */
  ERR_RPT_012: { status: 410, retryable: false, message: 'Output expired' },
  /** Delete of a report that an active schedule or a live job targets. */
  ERR_RPT_013: { status: 409, retryable: false, message: 'Report is used by active schedules or jobs' },
  /** `ERR_JOB_*` already means document jobs. */
  ERR_RJOB_001: { status: 404, retryable: false, message: 'Report job not found' },
  /** A job definition that cannot run (`relatedInfo.errors: [{path, message}]`). */
  ERR_RJOB_002: { status: 400, retryable: false, message: 'Report job invalid' },
  ERR_RJOB_003: { status: 404, retryable: false, message: 'Job run not found' },
  /** A job run's `error` when no report completed or `stopOnFailure` stopped it; never an HTTP answer. */
  ERR_RJOB_004: { status: 422, retryable: false, message: 'Report job run failed' },
  /** Cancel of a job run that is delivering or has ended. */
  ERR_RJOB_005: { status: 409, retryable: false, message: 'The job run can no longer be cancelled' },
  ERR_RJOB_006: { status: 409, retryable: false, message: 'Report job is used by active schedules' },
  ERR_SCHED_001: { status: 404, retryable: false, message: 'Schedule not found' },
  /** The cron expression or time zone is refused (`relatedInfo.errors`); docs/reporting.md "Scheduling". */
  ERR_SCHED_002: { status: 400, retryable: false, message: 'Invalid cron expression or time zone' },
  /** Two fire times are closer than REPORTING_SCHEDULE_MIN_INTERVAL_MINUTES (`relatedInfo.minIntervalMinutes`). */
  ERR_SCHED_003: { status: 400, retryable: false, message: 'Schedule fires more often than allowed' },
  /** REPORTING_SCHEDULES_PER_PROJECT reached (`relatedInfo.limit`). */
  ERR_SCHED_004: { status: 403, retryable: false, message: 'Schedule limit reached' },
  ERR_SCHED_005: { status: 409, retryable: false, message: 'Schedule target is not published' },
  ERR_CHAN_001: { status: 404, retryable: false, message: 'Channel not found' },
  /** A channel's config or secrets refused (`relatedInfo.errors: [{path, message}]`), or a per-project/per-schedule channel limit. */
  ERR_CHAN_002: { status: 400, retryable: false, message: 'Channel configuration invalid' },
  ERR_CHAN_003: { status: 409, retryable: false, message: 'A channel with the same name exists' },
  ERR_CHAN_004: { status: 409, retryable: false, message: 'Channel is used by schedules or jobs' },
  /**
   * A channel's target changed (SFTP host, port or host key; WebDAV baseUrl; a webhook URL's origin) while a
   * stored secret was neither given again nor cleared (`relatedInfo: {field, fields, changed}`): secrets do not
   * follow a changed target (docs/security.md "Reporting channels: verified senders, budgets, header secrets").
   */
  ERR_CHAN_005: { status: 400, retryable: false, message: 'The channel target changed: give its secrets again' },
  // --- Reporting agents (docs/reporting.md "Agents", "The agent protocol"; docs/errors.md "Errors") ---
  /** Another project's agent answers the same. */
  ERR_AGENT_001: { status: 404, retryable: false, message: 'Agent not found' },
  /** An `fmag_` token that is unknown or was rotated away. */
  ERR_AGENT_002: { status: 401, retryable: false, message: 'Invalid agent token' },
  ERR_AGENT_003: { status: 401, retryable: false, message: 'Agent is deactivated' },
  /** A task of another project or agent answers the same. */
  ERR_AGENT_004: { status: 404, retryable: false, message: 'Task not found' },
  ERR_AGENT_005: { status: 409, retryable: false, message: 'Task is not leased to this session' },
  ERR_AGENT_006: { status: 410, retryable: false, message: 'Task expired' },
  ERR_AGENT_007: { status: 413, retryable: false, message: 'Result too large' },
  ERR_AGENT_008: { status: 400, retryable: false, message: 'Result malformed' },
  /** Delete of an agent that datasources are still bound to (`relatedInfo.datasources`: how many). */
  ERR_AGENT_009: { status: 409, retryable: false, message: 'Agent has datasources' },
  ERR_AGENT_010: { status: 409, retryable: false, message: 'Agent public key already set' },
  /** A session id that a newer session replaced, or never existed: the agent opens a new session. */
  ERR_AGENT_011: { status: 409, retryable: false, message: 'Session replaced or unknown' },
  ERR_AGENT_012: { status: 503, retryable: true, message: 'No agent picked up the task in time' },
  /** Confirming a key when none awaits confirmation (`relatedInfo.keyStatus`: none or confirmed). */
  ERR_AGENT_013: { status: 409, retryable: false, message: 'No public key awaits confirmation' },
  /** The fingerprint given is not the one of the agent's pending key (or the key changed meanwhile). */
  ERR_AGENT_014: { status: 409, retryable: false, message: "The fingerprint does not match the agent's public key" },

  // --- the designer in another site (docs/embedding.md) ---
  /** Bearer looks like an embed token (`fmed_…`) but is unknown, expired, or its origin is no longer allowed. */
  ERR_EMBED_001: { status: 401, retryable: false, message: 'Embed token is invalid or has expired' },
  /** An embed token on a route other than its template's designer calls. */
  ERR_EMBED_002: { status: 403, retryable: false, message: 'An embed token opens only the designer of its template' },
  /** A view-mode embed token on a call that changes the template. */
  ERR_EMBED_003: { status: 403, retryable: false, message: 'This embed token only views the template' },
  /** Minting a token for a project that allows no origin to embed the designer, or for an origin not on its list. */
  ERR_EMBED_004: { status: 409, retryable: false, message: 'This origin may not embed the designer: add it to the project\'s embed origins first' },

  // --- output options: PDF/A, e-invoices, signatures, merging, archives (docs/documents.md "Output options") ---
  /** The printed PDF could not be made PDF/A as asked (`relatedInfo.reason`: a font without Unicode mapping for a `u` level, say). */
  ERR_OUTPUT_001: { status: 400, retryable: false, message: 'The document could not be made PDF/A' },
  /** `output.facturx`: the variables lack what the EN 16931 mapping needs (`relatedInfo.errors: [{path, message}]`). */
  ERR_OUTPUT_002: { status: 400, retryable: false, message: 'The e-invoice could not be made from the variables' },
  /** A file given to merge (or a template's appended PDF) is not a readable PDF, or is encrypted (`relatedInfo.part`). */
  ERR_OUTPUT_003: { status: 400, retryable: false, message: 'Not a readable PDF' },
  /** A finishing step needed more memory or time than PDF_TOOLS_MAX_HEAP_MB / PDF_TOOLS_TIMEOUT_MS allow. */
  ERR_OUTPUT_004: { status: 400, retryable: false, message: 'Finishing the document needed more memory or time than allowed' },
  /** A merge or a batch archive past its limits (`relatedInfo.limit`, `relatedInfo.field`): MERGE_MAX_PAGES, MERGE_MAX_PARTS, BATCH_ARCHIVE_MAX_DOCUMENTS, BATCH_ARCHIVE_MAX_BYTES. */
  ERR_OUTPUT_005: { status: 400, retryable: false, message: 'Merge or archive limit exceeded' },
  /** A job named in a merge is not completed, is not a PDF, or its file is gone (`relatedInfo.jobId`). */
  ERR_OUTPUT_006: { status: 409, retryable: false, message: 'This job cannot be merged' },
  /** `format: "png"`: more pixels than a document (IMAGE_MAX_PIXELS) or one page (IMAGE_MAX_PAGE_PIXELS) may have at the DPI asked (`relatedInfo.limit`, `relatedInfo.field`). */
  ERR_OUTPUT_007: { status: 400, retryable: false, message: 'Image size limit exceeded' },
  /** A batch archive with no completed document, or none whose file is still kept: nothing to archive (the archive's errorCode; never an HTTP answer). */
  ERR_OUTPUT_008: { status: 409, retryable: false, message: 'Nothing to archive' },
  /**
   * A render that failed for the renderer's own reasons (Chromium timed out, crashed or broke its
   * protocol) after its retries: a failed job's `errorCode` (docs/documents.md "Limits and errors"). The
   * browser's own message is never shown; the job's says what happened in the catalogue's words.
   */
  ERR_RENDER_001: { status: 422, retryable: false, message: 'The document could not be rendered' },
  ERR_SIGN_001: { status: 404, retryable: false, message: 'Signing certificate not found' },
  /** The PKCS#12 file cannot be read with the password given, holds no private key, or its certificate has expired (`relatedInfo.reason`). */
  ERR_SIGN_002: { status: 400, retryable: false, message: 'The PKCS#12 file or its password is not valid' },
  /** The configured timestamp authority refused, answered nonsense, or is not reachable (outbound guard included). */
  ERR_SIGN_003: { status: 502, retryable: true, message: 'The timestamp authority did not give a timestamp' },
  ERR_RDLV_001: { status: 404, retryable: false, message: 'Delivery not found' },
  ERR_RDLV_002: { status: 409, retryable: false, message: 'Cannot retry a completed delivery' },
  ERR_RDLV_003: { status: 409, retryable: false, message: 'Delivery is still in progress' },
  /** A run's or job run's `error` when some of its deliveries failed after their retries ("n of m deliveries failed"); never an HTTP answer. */
  ERR_RDLV_004: { status: 422, retryable: false, message: 'Deliveries failed' },
  // --- Reporting imports (docs/reporting.md "Imports"; docs/errors.md "Errors") ---
  ERR_IMP_001: { status: 400, retryable: false, message: 'No file uploaded' },
  ERR_IMP_002: { status: 400, retryable: false, message: 'Unrecognised model format' },
  /** The file is not readable as its format (`relatedInfo.errors: [{path, message}]`). */
  ERR_IMP_003: { status: 400, retryable: false, message: 'Model file invalid' },
  /** Over 10 MB, or a zip of more than 500 entries or 50 MB unpacked. */
  ERR_IMP_004: { status: 413, retryable: false, message: 'Import file too large' },
  ERR_IMP_005: { status: 404, retryable: false, message: 'Import not found' },
  // --- OAuth client credentials (docs/oauth.md); the token endpoint's answers also carry RFC 6749 `error` ---
  /** Another project's client answers the same. */
  ERR_OAUTH_001: { status: 404, retryable: false, message: 'OAuth client not found' },
  /** Token endpoint, `invalid_client`: unknown client, wrong secret, or no client authentication. */
  ERR_OAUTH_002: { status: 401, retryable: false, message: 'Client authentication failed' },
  /** Token endpoint, `invalid_client`: the client is deactivated, or its creator left the project or is deleting their account. */
  ERR_OAUTH_003: { status: 401, retryable: false, message: 'OAuth client is deactivated' },
  /** Token endpoint, `unsupported_grant_type`: only `client_credentials` is served. */
  ERR_OAUTH_004: { status: 400, retryable: false, message: 'Unsupported grant type' },
  /** Token endpoint, `invalid_scope`: a scope entry that is no permission flag or one the client does not hold (`relatedInfo.invalid`). */
  ERR_OAUTH_005: { status: 400, retryable: false, message: 'Invalid scope' },
  /** Token endpoint, `invalid_request`: a parameter missing or repeated, two client authentication methods, a body that is neither a form nor JSON. */
  ERR_OAUTH_006: { status: 400, retryable: false, message: 'Invalid token request' },
  /** Bearer `fmo_…` unknown, expired, or revoked (client deleted, deactivated or its secret rotated). */
  ERR_OAUTH_007: { status: 401, retryable: false, message: 'Invalid or expired OAuth access token' },
  /** Token endpoint, `slow_down`: too many failed client authentications from this address (`retryAfter`). */
  ERR_OAUTH_008: { status: 429, retryable: true, message: 'Too many failed client authentications' },
} as const satisfies Record<string, { status: number; retryable: boolean; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

/** Whether trying the same thing again later can succeed (the catalogue's `retryable`). */
export function isRetryable(code: ErrorCode): boolean {
  return ERRORS[code].retryable;
}

/**
 * The one error type services and activities throw. The API renders it as the spec's error body;
 * an activity turns it into an ApplicationFailure whose type is the code (activities/failure.ts).
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** From the catalogue: whether a retry can help. */
  readonly retryable: boolean;
  readonly relatedInfo?: Record<string, unknown>;

  constructor(code: ErrorCode, message?: string, relatedInfo?: Record<string, unknown>) {
    super(message ?? ERRORS[code].message);
    this.name = 'AppError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.retryable = ERRORS[code].retryable;
    this.relatedInfo = relatedInfo;
  }
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERRORS, value);
}

/** The spec's error body. */
export interface ErrorBody {
  statusCode: number;
  code: string;
  message: string;
  timestamp: string;
  path: string;
  /** Seconds to wait before trying again: on every answer whose error carries `relatedInfo.retryAfter` (every 429). */
  retryAfter?: number;
  relatedInfo?: Record<string, unknown>;
}

/**
 * A validation error raised by hand (one check in a service, not a Joi schema) lists its one
 * problem in `relatedInfo.errors` as the schema checks do (docs/errors.md "Validation errors"),
 * so that a client reads every validation answer the same way.
 */
function singleProblemListed(err: AppError): Record<string, unknown> | undefined {
  const info = err.relatedInfo;
  if ((err.code !== 'ERR_VALID_001' && err.code !== 'ERR_VALID_005') || Array.isArray(info?.errors)) return info;
  const path = typeof info?.field === 'string' ? info.field : '';
  return { ...info, errors: [{ path, code: err.code, message: err.message }] };
}

export function errorBody(err: AppError, path: string, now = new Date()): ErrorBody {
  const body: ErrorBody = {
    statusCode: err.status,
    code: err.code,
    message: err.message,
    timestamp: now.toISOString(),
    path,
  };
  // Spec (Flow validate): a rate-limited body carries `retryAfter` in seconds at the top level;
  // every 429 does, whichever limiter refused. relatedInfo keeps its copy for older clients.
  const retryAfter = err.relatedInfo?.retryAfter;
  if (typeof retryAfter === 'number') body.retryAfter = retryAfter;
  const info = singleProblemListed(err);
  if (info && Object.keys(info).length > 0) body.relatedInfo = info;
  return body;
}
