// verifyWebhook against the official standardwebhooks package's signer, the
// server's rotation header (two signatures) and the tolerance window.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Webhook } from "standardwebhooks";
import { verifyWebhook, WebhookVerificationError } from "../dist/src/index.js";

const oldSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const newSecret = "whsec_" + Buffer.from("a second secret, 32 bytes long!!").toString("base64");
const body = '{"type":"match.made","matchId":"mat_1"}';
const at = 1_700_000_000;

function headers(secrets, id = "mat_1", ts = at) {
  const sigs = secrets.map((s) => new Webhook(s).sign(id, new Date(ts * 1000), body));
  return { "webhook-id": id, "webhook-timestamp": String(ts), "webhook-signature": sigs.join(" ") };
}

const refused = (reason) => (e) => e instanceof WebhookVerificationError && e.reason === reason;

test("the official signer's signatures verify, one or two at a time", async () => {
  await verifyWebhook(oldSecret, headers([oldSecret]), body, { now: at });
  const now = Math.floor(Date.now() / 1000);
  const both = headers([newSecret, oldSecret], "mat_1", now);
  for (const s of [oldSecret, newSecret]) {
    await verifyWebhook(s, both, body);
    new Webhook(s).verify(body, both); // the official verifier agrees
  }
});

test("the published example verifies", async () => {
  const h = { "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek", "webhook-timestamp": "1614265330", "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" };
  await verifyWebhook(oldSecret, h, '{"test": 2432232314}', { now: 1614265330 });
});

test("wrong secret, body, id, timestamp or window are refused", async () => {
  const h = headers([oldSecret]);
  await assert.rejects(verifyWebhook(newSecret, h, body, { now: at }), refused("signature"));
  await assert.rejects(verifyWebhook(oldSecret, h, body + " ", { now: at }), refused("signature"));
  await assert.rejects(verifyWebhook(oldSecret, { ...h, "webhook-id": "mat_2" }, body, { now: at }), refused("signature"));
  await assert.rejects(verifyWebhook(oldSecret, { ...h, "webhook-timestamp": String(at + 1) }, body, { now: at }), refused("signature"));
  await verifyWebhook(oldSecret, h, body, { now: at + 300 });
  await assert.rejects(verifyWebhook(oldSecret, h, body, { now: at + 301 }), refused("expired"));
  await assert.rejects(verifyWebhook(oldSecret, h, body, { now: at - 301 }), refused("expired"));
  await assert.rejects(verifyWebhook(oldSecret, { ...h, "webhook-timestamp": "soon" }, body, { now: at }), refused("timestamp"));
  const { "webhook-id": _, ...noId } = h;
  await assert.rejects(verifyWebhook(oldSecret, noId, body, { now: at }), refused("missing-header"));
  await assert.rejects(verifyWebhook("secret", h, body, { now: at }), refused("secret"));
  // Both verifiers agree on a signature from the other secret.
  assert.throws(() => new Webhook(newSecret).verify(body, headers([oldSecret], "mat_1", Math.floor(Date.now() / 1000))));
});
