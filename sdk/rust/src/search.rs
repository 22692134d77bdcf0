//! The game client's search: a [`Stream`] of [`SearchMessage`]s over the
//! WebSocket `GET /v1/search?ticket=<token>`, or over REST polling
//! (`POST /v1/searches`, `GET/DELETE /v1/searches/{ticketId}`) when the
//! socket cannot be opened, with [`Search::accept`], [`Search::decline`]
//! and [`Search::cancel`].

use crate::error::{error_of, Error};
use crate::messages::SearchMessage;
use crate::rest_poll;
use futures::Stream;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use url::Url;

mod socket;
use socket::{lock, run_socket, timed_out, Shared, Socket};

/// How a search reaches the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// The WebSocket, and REST polling when the socket cannot be opened
    /// (a proxy refusing the upgrade); a problem answer is never retried.
    Auto,
    /// The WebSocket only.
    WebSocket,
    /// REST polling only.
    Rest,
}

/// Search options.
#[derive(Debug, Clone)]
pub struct SearchOptions {
    /// The transport; [`Transport::Auto`] by default.
    pub transport: Transport,
    /// Time between REST polls; default 2 s, kept within 0.5..=20 s so a
    /// poll always comes well inside the server's 30 s limit.
    pub poll_interval: Duration,
    /// How long the WebSocket may take to open (default
    /// [`REQUEST_TIMEOUT`](crate::REQUEST_TIMEOUT)); REST calls are bounded
    /// by the HTTP client's own timeout, that long by default.
    pub open_timeout: Duration,
    /// How long an open WebSocket may hear nothing from the server, which
    /// pings every second, before the search counts as cut: the next
    /// message is an [`Error::WebSocket`] (an I/O `TimedOut`) and the
    /// search ends. Default 15 s.
    pub silence_timeout: Duration,
}

impl Default for SearchOptions {
    fn default() -> Self {
        Self {
            transport: Transport::Auto,
            poll_interval: Duration::from_secs(2),
            open_timeout: crate::REQUEST_TIMEOUT,
            silence_timeout: Duration::from_secs(15),
        }
    }
}

/// The longest a search may go unpolled before the server ends it (`REST_POLL_LAPSED`).
pub const REST_POLL_LIMIT: Duration = Duration::from_secs(30);

/// The game client: starts searches with ticket tokens (no API key).
#[derive(Debug, Clone)]
pub struct GameClient {
    pub(crate) http: reqwest::Client,
    pub(crate) base: Url,
    options: SearchOptions,
}

pub(crate) enum Command {
    Text(String),
    Close,
    PollNow,
}

/// One running search. Poll it as a [`Stream`]; it ends after the final
/// message (or when the server closes the socket).
pub struct Search {
    events: mpsc::UnboundedReceiver<Result<SearchMessage, Error>>,
    commands: mpsc::UnboundedSender<Command>,
    ticket_id: Arc<Mutex<Option<String>>>,
    /// On the socket: whether a `proposed` arrived since the last
    /// `requeued` or final message (what an answer on the socket needs).
    proposal_open: Arc<AtomicBool>,
    /// The `matchId` of the last `proposed` this handle yielded, until a
    /// `requeued` or final message: the proposal an answer names
    /// (docs/acceptance.md, "Naming the proposal").
    proposal: Option<String>,
    client: GameClient,
    token: String,
    transport: Transport,
}

impl GameClient {
    /// A game client for the server at `base_url` (e.g. `https://mm.example.com`).
    ///
    /// # Errors
    /// [`Error::Url`] when `base_url` is not an `http(s)` URL.
    pub fn new(base_url: &str) -> Result<Self, Error> {
        Ok(Self {
            http: crate::bounded_http(),
            base: crate::base_url(base_url)?,
            options: SearchOptions::default(),
        })
    }

    /// The same client with other options.
    pub fn with_options(mut self, options: SearchOptions) -> Self {
        self.options = SearchOptions {
            poll_interval: options
                .poll_interval
                .clamp(Duration::from_millis(500), Duration::from_secs(20)),
            ..options
        };
        self
    }

    /// Starts a search with a ticket's token.
    ///
    /// # Errors
    /// The server's problem (`TICKET_INVALID`, `SEARCH_ALREADY_ACTIVE`,
    /// `PLAYER_ALREADY_SEARCHING`, `PING_REQUIRES_WEBSOCKET` over REST, …);
    /// with [`Transport::WebSocket`], a socket that cannot be opened.
    pub async fn search(&self, token: &str) -> Result<Search, Error> {
        let (events_tx, events) = mpsc::unbounded_channel();
        let (commands, commands_rx) = mpsc::unbounded_channel();
        let ticket_id = Arc::new(Mutex::new(None));
        let proposal_open = Arc::new(AtomicBool::new(false));
        let transport = match self.options.transport {
            Transport::Rest => Transport::Rest,
            wanted => match self.open_socket(token).await {
                Ok(socket) => {
                    let shared = (ticket_id.clone(), proposal_open.clone());
                    let silence = self.options.silence_timeout;
                    let socket =
                        run_socket(socket, events_tx.clone(), commands_rx, shared, silence);
                    tokio::spawn(socket);
                    return Ok(self.handle(
                        events,
                        commands,
                        (ticket_id, proposal_open),
                        token,
                        Transport::WebSocket,
                    ));
                }
                Err(e) if wanted == Transport::WebSocket || e.problem().is_some() => return Err(e),
                Err(_) => Transport::Rest,
            },
        };
        let started = rest_poll::start(self, token).await?;
        *lock(&ticket_id) = Some(started.clone());
        let poller = rest_poll::Poller {
            client: self.clone(),
            token: token.to_owned(),
            ticket_id: started,
            interval: self.options.poll_interval,
        };
        tokio::spawn(poller.run(events_tx, commands_rx));
        Ok(self.handle(
            events,
            commands,
            (ticket_id, proposal_open),
            token,
            transport,
        ))
    }

    fn handle(
        &self,
        events: mpsc::UnboundedReceiver<Result<SearchMessage, Error>>,
        commands: mpsc::UnboundedSender<Command>,
        (ticket_id, proposal_open): Shared,
        token: &str,
        transport: Transport,
    ) -> Search {
        Search {
            events,
            commands,
            ticket_id,
            proposal_open,
            proposal: None,
            client: self.clone(),
            token: token.to_owned(),
            transport,
        }
    }

    async fn open_socket(&self, token: &str) -> Result<Socket, Error> {
        let mut url = self
            .base
            .join("v1/search")
            .map_err(|e| Error::Url(e.to_string()))?;
        let scheme = if url.scheme() == "https" { "wss" } else { "ws" };
        url.set_scheme(scheme)
            .map_err(|_| Error::Url("scheme".into()))?;
        url.query_pairs_mut().append_pair("ticket", token);
        let request = url.as_str().into_client_request()?;
        let connect = tokio_tungstenite::connect_async(request);
        let Ok(connected) = tokio::time::timeout(self.options.open_timeout, connect).await else {
            return Err(timed_out("the WebSocket did not open in time"));
        };
        match connected {
            Ok((socket, _)) => Ok(socket),
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                let status = response.status().as_u16();
                let retry = response
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                let body = response.body().clone().unwrap_or_default();
                Err(
                    match crate::error::Problem::parse(&body, retry.as_deref()) {
                        Some(p) => Error::Problem(Box::new(p)),
                        None => Error::Status {
                            status,
                            body: String::from_utf8_lossy(&body).into_owned(),
                        },
                    },
                )
            }
            Err(e) => Err(e.into()),
        }
    }

    /// `GET|POST|DELETE /v1/searches/{ticketId}[/verb][?matchId=…]` with
    /// `Authorization: Ticket <token>`; `answer` is the verb and the
    /// proposal it names.
    pub(crate) async fn ticket_call(
        &self,
        method: reqwest::Method,
        ticket_id: &str,
        answer: Option<(&str, Option<&str>)>,
        token: &str,
    ) -> Result<reqwest::Response, Error> {
        let mut path = format!("v1/searches/{}", crate::segment(ticket_id));
        if let Some((verb, _)) = answer {
            path = format!("{path}/{verb}");
        }
        let mut url = self
            .base
            .join(&path)
            .map_err(|e| Error::Url(e.to_string()))?;
        if let Some((_, Some(named))) = answer {
            url.query_pairs_mut().append_pair("matchId", named);
        }
        let response = self
            .http
            .request(method, url)
            .header("authorization", format!("Ticket {token}"))
            .send()
            .await?;
        if response.status().is_success() {
            Ok(response)
        } else {
            Err(error_of(response).await)
        }
    }
}

impl Search {
    /// The transport in use ([`Transport::WebSocket`] or [`Transport::Rest`]).
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// The `tkt_…` id, once known (after `searching` on the socket; at once over REST).
    pub fn ticket_id(&self) -> Option<String> {
        lock(&self.ticket_id).clone()
    }

    /// The next message; `None` once the search is over.
    pub async fn recv(&mut self) -> Option<Result<SearchMessage, Error>> {
        let next = self.events.recv().await;
        self.note(next.as_ref());
        next
    }

    /// Notes the proposal `yielded` names or ends.
    fn note(&mut self, yielded: Option<&Result<SearchMessage, Error>>) {
        match yielded {
            Some(Ok(SearchMessage::Proposed(p))) => self.proposal = Some(p.match_id.clone()),
            Some(Ok(
                SearchMessage::Requeued { .. }
                | SearchMessage::Matched { .. }
                | SearchMessage::AssignmentTimeout
                | SearchMessage::Failed { .. }
                | SearchMessage::Cancelled
                | SearchMessage::Expired { .. },
            )) => self.proposal = None,
            _ => {}
        }
    }

    /// Accepts the open proposal, naming it (`{"type":"accept","matchId":…}`
    /// on the socket, `POST …/accept?matchId=…` over REST): one that closed
    /// meanwhile refuses the answer rather than the next proposal taking
    /// it. Answers are idempotent.
    ///
    /// # Errors
    /// `NOT_PROPOSED` when no proposal is open (on the socket: no `proposed`
    /// since the last `requeued` or final message); over REST also
    /// `PROPOSAL_CLOSED`. [`Error::Ended`] after the end.
    pub async fn accept(&self) -> Result<(), Error> {
        self.answer("accept").await
    }

    /// Declines the open proposal (the player is cooled down in this mode).
    ///
    /// # Errors
    /// As [`Search::accept`].
    pub async fn decline(&self) -> Result<(), Error> {
        self.answer("decline").await
    }

    async fn answer(&self, verb: &'static str) -> Result<(), Error> {
        match self.transport {
            Transport::Rest => {
                let id = self.ticket_id().ok_or(Error::Ended)?;
                let answer = (verb, self.proposal.as_deref());
                self.client
                    .ticket_call(reqwest::Method::POST, &id, Some(answer), &self.token)
                    .await?;
                self.commands
                    .send(Command::PollNow)
                    .map_err(|_| Error::Ended)
            }
            _ => {
                // The socket has no answer to a send: refuse here what the
                // server would refuse over REST.
                if !self.proposal_open.load(Ordering::SeqCst) {
                    return Err(Error::Problem(Box::new(not_proposed())));
                }
                let text = match &self.proposal {
                    Some(id) => serde_json::json!({ "type": verb, "matchId": id }),
                    None => serde_json::json!({ "type": verb }),
                };
                let text = text.to_string();
                self.commands
                    .send(Command::Text(text))
                    .map_err(|_| Error::Ended)
            }
        }
    }

    /// Cancels the search: `DELETE /v1/searches/{ticketId}` once the id is
    /// known (the stream then yields the server's `cancelled`), else the
    /// socket is closed (which the server takes as a cancel) and the stream
    /// yields `cancelled` itself.
    ///
    /// # Errors
    /// `TICKET_ALREADY_MATCHED` when the match came first.
    pub async fn cancel(&self) -> Result<(), Error> {
        match self.ticket_id() {
            Some(id) => {
                self.client
                    .ticket_call(reqwest::Method::DELETE, &id, None, &self.token)
                    .await?;
                let _ = self.commands.send(Command::PollNow);
                Ok(())
            }
            None => self.commands.send(Command::Close).map_err(|_| Error::Ended),
        }
    }
}

/// The problem the server answers an accept or decline without an open
/// proposal (`409 NOT_PROPOSED`).
fn not_proposed() -> crate::error::Problem {
    let detail = "the ticket is in no match proposal";
    crate::error::Problem {
        status: 409,
        code: "NOT_PROPOSED".into(),
        title: "Not proposed".into(),
        detail: detail.into(),
        errors: Vec::new(),
        ticket_id: None,
        match_id: None,
        retry_after_seconds: None,
        retry_after: None,
        body: serde_json::json!({
            "type": "about:blank", "title": "Not proposed", "status": 409,
            "code": "NOT_PROPOSED", "detail": detail, "errors": [],
        }),
    }
}

impl Stream for Search {
    type Item = Result<SearchMessage, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = self.events.poll_recv(cx);
        if let Poll::Ready(yielded) = &next {
            self.note(yielded.as_ref());
        }
        next
    }
}
