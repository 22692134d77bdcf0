//! The REST fallback of a search: `POST /v1/searches`, then `GET
//! /v1/searches/{ticketId}` every poll interval, turning the polled status
//! into the same messages the socket sends. The server ends a search not
//! polled for 30 s, so a failed poll is retried sooner than that: after
//! the server's `Retry-After` when it fits, else before the limit.

use crate::error::{read_json, Error};
use crate::messages::{Proposal, SearchMessage, Status};
use crate::search::{Command, GameClient, REST_POLL_LIMIT};
use crate::status::TicketStatus;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Keeps this much of the 30 s limit in hand for the poll itself.
const MARGIN: Duration = Duration::from_secs(5);

/// Starts a REST search; answers its `tkt_…` id.
pub(crate) async fn start(client: &GameClient, token: &str) -> Result<String, Error> {
    let url = client
        .base
        .join("v1/searches")
        .map_err(|e| Error::Url(e.to_string()))?;
    let response = client
        .http
        .post(url)
        .json(&json!({ "ticket": token }))
        .send()
        .await?;
    let started: Value = read_json(response).await?;
    started
        .get("ticketId")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| Error::Decode("no ticketId in the answer".into()))
}

pub(crate) struct Poller {
    pub client: GameClient,
    pub token: String,
    pub ticket_id: String,
    pub interval: Duration,
}

/// What a `status` says: the waiting reason, `found`, `needed` and
/// `roleWaits`, a change of any being a new `status` as on the socket
/// (docs/searching.md), and the wait's whole seconds: over REST no ping
/// changes to carry a newer wait.
type StatusKey = (
    Option<Value>,
    Option<u64>,
    Option<u64>,
    Option<BTreeMap<String, f64>>,
    i64,
);

/// What the poller told so far, to send each message once.
#[derive(Default)]
struct Told {
    searching: bool,
    status: Option<StatusKey>,
    proposal: Option<String>,
    matched: bool,
    was_held: bool,
}

impl Poller {
    pub(crate) async fn run(
        self,
        events: mpsc::UnboundedSender<Result<SearchMessage, Error>>,
        mut commands: mpsc::UnboundedReceiver<Command>,
    ) {
        let mut told = Told::default();
        let mut last_ok = Instant::now();
        let mut wait = Duration::ZERO;
        loop {
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                command = commands.recv() => if command.is_none() { return self.leave().await },
            }
            let polled = self
                .client
                .ticket_call(reqwest::Method::GET, &self.ticket_id, None, &self.token)
                .await;
            let status = match polled {
                Ok(response) => read_json::<TicketStatus>(response).await,
                Err(e) => Err(e),
            };
            match status {
                Ok(status) => {
                    last_ok = Instant::now();
                    wait = self.interval;
                    let (messages, over, restart) = told.messages(&status);
                    for message in messages {
                        if events.send(Ok(message)).is_err() {
                            return self.leave().await;
                        }
                    }
                    if over {
                        return;
                    }
                    if restart && start(&self.client, &self.token).await.is_err() {
                        // The next poll tells what the ticket became.
                        wait = Duration::from_secs(1);
                    }
                }
                Err(e) => {
                    let retryable = match &e {
                        Error::Problem(p) => p.status == 429 || p.status >= 500,
                        Error::Status { status, .. } => *status == 429 || *status >= 500,
                        Error::Http(_) => true,
                        _ => false,
                    };
                    let left = REST_POLL_LIMIT.saturating_sub(last_ok.elapsed() + MARGIN);
                    if !retryable || left.is_zero() {
                        let _ = events.send(Err(e));
                        return;
                    }
                    let asked = e
                        .problem()
                        .and_then(|p| p.retry_after)
                        .unwrap_or(self.interval);
                    wait = asked.min(left).max(Duration::from_millis(200));
                }
            }
        }
    }
}

impl Poller {
    /// The `Search` was dropped before its search was over: ends it
    /// (`DELETE /v1/searches/{ticketId}`, best effort) as closing a socket
    /// does; left to lapse, it could be matched meanwhile.
    async fn leave(&self) {
        let _ = self
            .client
            .ticket_call(reqwest::Method::DELETE, &self.ticket_id, None, &self.token)
            .await;
    }
}

impl Told {
    /// The messages a polled status adds, whether the search is over, and
    /// whether a released ticket should start searching again.
    fn messages(&mut self, s: &TicketStatus) -> (Vec<SearchMessage>, bool, bool) {
        let mut out = Vec::new();
        match s.status.as_str() {
            "searching" | "created" => {
                // After the last accept the ticket reads `searching` with
                // `MATCH_PENDING` until the match is stored (docs/searching.md,
                // "Matched" means stored): still held, not back in the queue.
                let pending = s
                    .waiting_reason
                    .as_ref()
                    .and_then(|r| r.get("code"))
                    .and_then(Value::as_str)
                    == Some("MATCH_PENDING");
                if self.was_held && !pending {
                    out.push(SearchMessage::Requeued { match_id: None });
                    self.was_held = false;
                    self.status = None;
                }
                if !self.searching {
                    self.searching = true;
                    out.push(SearchMessage::Searching {
                        ticket_id: s.ticket_id.clone(),
                        game_mode: s.game_mode.clone(),
                        queued_at: s.queued_at.clone().unwrap_or_default(),
                    });
                }
                let num = |k: &str| s.raw.get(k).and_then(Value::as_u64);
                let key = (
                    s.waiting_reason.clone(),
                    num("found"),
                    num("needed"),
                    s.role_waits.clone(),
                    // Whole seconds: a saturating cast of a wait of at most days.
                    s.wait_seconds.unwrap_or_default().floor() as i64,
                );
                if self.status.as_ref() != Some(&key) {
                    out.push(SearchMessage::Status(Status {
                        wait_seconds: s.wait_seconds.unwrap_or_default(),
                        ping_ms: None,
                        waiting_reason: key.0.clone(),
                        found: key.1.and_then(|v| u32::try_from(v).ok()),
                        needed: key.2.and_then(|v| u32::try_from(v).ok()),
                        role_waits: key.3.clone(),
                    }));
                    self.status = Some(key);
                }
                (out, false, false)
            }
            "proposed" => {
                if let Some(raw) = &s.proposal {
                    let id = raw
                        .get("matchId")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    if self.proposal.as_deref() != Some(id) {
                        self.proposal = Some(id.to_owned());
                        self.was_held = true;
                        if let Ok(mut p) = serde_json::from_value::<Proposal>(raw.clone()) {
                            p.raw = raw.clone();
                            out.push(SearchMessage::Proposed(p));
                        } else {
                            out.push(SearchMessage::Unknown(
                                json!({"type": "proposed", "proposal": raw}),
                            ));
                        }
                    }
                }
                (out, false, false)
            }
            "matched" => {
                if !self.matched {
                    self.matched = true;
                    out.push(SearchMessage::Matched {
                        match_: s.match_.clone().unwrap_or(Value::Null),
                    });
                }
                match &s.assignment {
                    None => (out, true, false),
                    Some(Value::Null) => {
                        self.was_held = true;
                        (out, false, false)
                    }
                    Some(a) => {
                        out.push(SearchMessage::Assigned {
                            connection: a
                                .get("connection")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_owned(),
                            data: a.get("data").cloned().unwrap_or(Value::Null),
                        });
                        (out, true, false)
                    }
                }
            }
            "released" => {
                // As a socket is told (docs/acceptance.md):
                // `assignment_timeout` when `reason` says so
                // (docs/searching.md, "Statuses"), then `requeued` at once,
                // as the search starts again (the next cycle may match it
                // before a poll reads it searching).
                if self.matched {
                    if s.reason.as_deref() == Some("ASSIGNMENT_TIMEOUT") {
                        out.push(SearchMessage::AssignmentTimeout);
                    }
                    out.push(SearchMessage::Requeued { match_id: None });
                    self.status = None;
                }
                self.was_held = !self.matched;
                self.matched = false;
                self.proposal = None;
                (out, false, true)
            }
            "cancelled" => (vec![SearchMessage::Cancelled], true, false),
            "expired" => (
                vec![SearchMessage::Expired {
                    reason: s.reason.clone(),
                }],
                true,
                false,
            ),
            "failed" => {
                let field = |k: &str| {
                    s.error
                        .as_ref()
                        .and_then(|e| e.get(k))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned()
                };
                (
                    vec![SearchMessage::Failed {
                        code: field("code"),
                        message: field("message"),
                    }],
                    true,
                    false,
                )
            }
            _ => (vec![SearchMessage::Unknown(s.raw.clone())], false, false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(v: Value) -> TicketStatus {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn polled_states_become_the_socket_messages() {
        let mut told = Told::default();
        let s = status(
            json!({"ticketId":"tkt_1","status":"searching","gameMode":"duel","queuedAt":"t","waitingReason":{"code":"NO_CANDIDATES"}}),
        );
        let (m, over, _) = told.messages(&s);
        assert_eq!(
            m.iter().map(SearchMessage::kind).collect::<Vec<_>>(),
            ["searching", "status"]
        );
        assert!(!over);
        assert!(told.messages(&s).0.is_empty(), "nothing new, nothing told");
        let p = status(
            json!({"status":"proposed","proposal":{"matchId":"mat_1","acceptBy":"t","accepted":[]}}),
        );
        assert_eq!(told.messages(&p).0[0].kind(), "proposed");
        let (m, _, _) = told.messages(&s);
        assert_eq!(
            m.iter().map(SearchMessage::kind).collect::<Vec<_>>(),
            ["requeued", "status"]
        );
        let waiting =
            status(json!({"status":"matched","match":{"matchId":"mat_2"},"assignment":null}));
        let (m, over, _) = told.messages(&waiting);
        assert_eq!((m[0].kind(), over), ("matched", false));
        let assigned = status(
            json!({"status":"matched","match":{"matchId":"mat_2"},"assignment":{"connection":"h:1","data":{}}}),
        );
        let (m, over, _) = told.messages(&assigned);
        assert_eq!((m[0].kind(), over), ("assigned", true));
        let (m, over, _) =
            Told::default().messages(&status(json!({"status":"matched","match":{}})));
        assert_eq!((m[0].kind(), over), ("matched", true));
        // The server's released bodies (docs/searching.md, "Statuses").
        for (reason, kinds) in [
            (
                "ASSIGNMENT_TIMEOUT",
                &["assignment_timeout", "requeued"][..],
            ),
            ("MATCH_RELEASED", &["requeued"][..]),
        ] {
            let (m, over, restart) = Told {
                matched: true,
                ..Told::default()
            }
            .messages(&status(
                json!({"ticketId":"tkt_1","status":"released","gameMode":"duel",
                    "playerId":"ana","expiresAt":"t","queuedAt":"t","waitSeconds":1.0,
                    "pingMs":null,"reason":reason}),
            ));
            assert_eq!(m.iter().map(SearchMessage::kind).collect::<Vec<_>>(), kinds);
            assert_eq!((over, restart), (false, true));
        }
        let (m, over, _) = told.messages(&status(
            json!({"status":"expired","reason":"REST_POLL_LAPSED"}),
        ));
        assert_eq!(
            m,
            [SearchMessage::Expired {
                reason: Some("REST_POLL_LAPSED".into())
            }]
        );
        assert!(over);
    }

    #[test]
    fn a_change_of_role_waits_alone_is_a_new_status() {
        let searching = |waits: Value| json!({"ticketId":"tkt_1","status":"searching","gameMode":"duel","queuedAt":"t","waitingReason":{"code":"NOT_ENOUGH_PLAYERS"},"roleWaits":waits});
        let mut told = Told::default();
        assert_eq!(
            kinds(&mut told, searching(Value::Null)),
            ["searching", "status"]
        );
        let (m, _, _) = told.messages(&status(searching(json!({"tank": 20.5}))));
        let [SearchMessage::Status(s)] = m.as_slice() else {
            panic!("{m:?}")
        };
        assert_eq!(s.role_waits, Some([("tank".to_owned(), 20.5)].into()));
        assert!(kinds(&mut told, searching(json!({"tank": 20.5}))).is_empty());
    }

    fn kinds(told: &mut Told, v: Value) -> Vec<String> {
        let (messages, _, _) = told.messages(&status(v));
        messages.iter().map(|m| m.kind().to_owned()).collect()
    }

    #[test]
    fn match_pending_after_the_last_accept_is_no_requeue() {
        let searching = |reason: Value| json!({"ticketId":"tkt_1","status":"searching","gameMode":"duel","queuedAt":"t","waitingReason":reason});
        let proposed = |id: &str| json!({"status":"proposed","proposal":{"matchId":id,"acceptBy":"t","acceptInSeconds":20,"accepted":[]}});
        let pending = json!({"code":"MATCH_PENDING"});
        let mut told = Told::default();
        kinds(&mut told, searching(json!({"code":"NO_CANDIDATES"})));
        assert_eq!(kinds(&mut told, proposed("mat_1")), ["proposed"]);
        // Everyone accepted: searching with MATCH_PENDING until the match is stored.
        assert_eq!(kinds(&mut told, searching(pending.clone())), ["status"]);
        let (m, over, _) = told.messages(&status(
            json!({"status":"matched","match":{"matchId":"mat_1"}}),
        ));
        assert_eq!(
            (m.iter().map(SearchMessage::kind).collect::<Vec<_>>(), over),
            (vec!["matched"], true)
        );

        // Back in the queue after MATCH_PENDING (or without it): a requeue.
        let mut told = Told::default();
        kinds(&mut told, searching(json!({"code":"NO_CANDIDATES"})));
        kinds(&mut told, proposed("mat_1"));
        assert_eq!(
            kinds(&mut told, searching(Value::Null)),
            ["requeued", "status"]
        );
        kinds(&mut told, proposed("mat_2"));
        assert_eq!(kinds(&mut told, searching(pending)), ["status"]);
        assert_eq!(
            kinds(&mut told, searching(json!({"code":"NO_CANDIDATES"}))),
            ["requeued", "status"]
        );
    }
}
