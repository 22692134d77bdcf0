/** Why a webhook was refused. `reason` is one of the listed words; the secret is never included. */
export class WebhookVerificationError extends Error {
  constructor(readonly reason: "secret" | "missing-header" | "timestamp" | "expired" | "signature", message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

/** A `Headers` object, or a plain object of headers (e.g. Node's `req.headers`). */
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

/** Options of {@link verifyWebhook}. */
export interface VerifyOptions {
  /** "Now" in unix seconds (default: the clock's). */
  now?: number;
  /** How far `webhook-timestamp` may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
}

function header(headers: HeaderSource, name: string): string {
  let value: string | string[] | null | undefined;
  if (typeof (headers as Headers).get === "function") value = (headers as Headers).get(name);
  else {
    const entry = Object.entries(headers).find(([k]) => k.toLowerCase() === name);
    value = entry?.[1];
  }
  if (Array.isArray(value)) value = value.join(" ");
  if (typeof value !== "string" || value === "") {
    throw new WebhookVerificationError("missing-header", `the \`${name}\` header is missing`);
  }
  return value;
}

function fromBase64(text: string): Uint8Array {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/**
 * Verifies a webhook per Standard Webhooks: `webhook-signature` carries
 * `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>` signatures
 * separated by spaces (two during a secret rotation: either verifies), and
 * `webhook-timestamp` must be within the tolerance of now. `rawBody` is the
 * body exactly as received (never a re-serialisation). The comparison is Web
 * Crypto's HMAC verify (constant time). Works in Node 20+ and browsers.
 *
 * @throws WebhookVerificationError when the webhook is not authentic.
 */
export async function verifyWebhook(
  secret: string,
  headers: HeaderSource,
  rawBody: string | Uint8Array,
  options: VerifyOptions = {},
): Promise<void> {
  let key: Uint8Array;
  try {
    if (!secret.startsWith("whsec_")) throw new Error();
    key = fromBase64(secret.slice("whsec_".length).trim());
    if (key.length === 0) throw new Error();
  } catch {
    throw new WebhookVerificationError("secret", "the webhook secret is not `whsec_<base64>`");
  }
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp").trim();
  const signatures = header(headers, "webhook-signature");
  if (!/^\d+$/.test(timestamp)) {
    throw new WebhookVerificationError("timestamp", "`webhook-timestamp` is not unix seconds");
  }
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)) {
    throw new WebhookVerificationError("expired", "`webhook-timestamp` is too far from now");
  }
  const body = typeof rawBody === "string" ? new TextEncoder().encode(rawBody) : rawBody;
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);
  const cryptoKey = await crypto.subtle.importKey("raw", key as BufferSource, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  for (const part of signatures.split(" ")) {
    const [version, sig] = part.split(",", 2);
    if (version !== "v1" || !sig) continue;
    let bytes: Uint8Array;
    try {
      bytes = fromBase64(sig);
    } catch {
      continue;
    }
    if (await crypto.subtle.verify("HMAC", cryptoKey, bytes as BufferSource, signed as BufferSource)) return;
  }
  throw new WebhookVerificationError("signature", "no signature matches");
}
