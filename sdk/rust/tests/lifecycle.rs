//! Acceptance and assignment against a real `matchplane dev`
//! (docs/acceptance.md): proposals answered over the socket and over REST,
//! declines, and the backend's assignment reaching both players.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use futures::StreamExt;
use matchplane_client::{BackendClient, CreatedTicket, NewTicket, Search, SearchMessage};
use serde_json::{json, Value};
use std::time::Duration;

/// A duel with acceptance (20 s to answer) and assignment (60 s to assign).
fn lifecycle_mode(name: &str) -> Value {
    let mut mode = common::duel(name, "http://127.0.0.1:9/hook");
    mode["acceptance"] = json!({"timeoutSeconds": 20});
    mode["assignment"] = json!({"waitSeconds": 60});
    mode
}

async fn ticket(backend: &BackendClient, mode: &str, player: &str) -> CreatedTicket {
    let ticket = NewTicket {
        game_mode: mode.into(),
        player_id: player.into(),
        attributes: Some(json!({"mmr": 1500})),
        party: None,
    };
    backend.create_ticket(&ticket).await.unwrap()
}

/// Reads `search`, answering every proposal (`accept` or decline), until a
/// message `stop` holds for or the search ends; fails after 30 s.
async fn read_until(
    search: &mut Search,
    accept: bool,
    stop: impl Fn(&SearchMessage) -> bool,
) -> Vec<SearchMessage> {
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let Ok(next) = tokio::time::timeout_at(deadline, search.next()).await else {
            panic!(
                "nothing ended the search within 30 s: {:?}",
                common::kinds(&seen)
            );
        };
        let Some(message) = next else { return seen };
        let message = message.unwrap();
        if matches!(message, SearchMessage::Proposed(_)) {
            let answer = if accept {
                search.accept().await
            } else {
                search.decline().await
            };
            answer.unwrap();
        }
        let done = stop(&message) || message.ends_search();
        seen.push(message);
        if done {
            return seen;
        }
    }
}

#[tokio::test]
async fn both_accept_and_the_assignment_reaches_each_player_with_its_own_data() {
    let dev = common::Dev::start();
    let backend = BackendClient::new(&dev.base, &dev.project, &dev.key).unwrap();
    backend
        .put_game_mode("sdk-assign", &lifecycle_mode("sdk-assign"))
        .await
        .unwrap();
    let ana = ticket(&backend, "sdk-assign", "ana").await;
    let ben = ticket(&backend, "sdk-assign", "ben").await;
    let (socket, rest) = common::clients(&dev);
    let mut over_socket = socket.search(&ana.token).await.unwrap();
    let mut over_rest = rest.search(&ben.token).await.unwrap();

    // The studio assigns a server once the match is made (when its
    // `match.made` webhook would arrive): its status turns `made` after the
    // last accept.
    let studio = async {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        let match_id = loop {
            let status = backend.ticket(&ana.ticket_id).await.unwrap();
            if let Some(id) = status.match_.as_ref().and_then(|m| m["matchId"].as_str()) {
                if backend.get_match(id).await.unwrap()["status"] == "made" {
                    break id.to_owned();
                }
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "not made: {status:?}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        let assignment = json!({"connection": "203.0.113.7:7777", "data": {"map": "dust"},
            "players": {"ana": {"data": {"joinToken": "a1"}}, "ben": {"data": {"joinToken": "b2"}}}});
        let assigned = backend.assign(&match_id, &assignment).await.unwrap();
        assert_eq!(assigned["matchId"], match_id.as_str(), "{assigned}");
        match_id
    };
    let (a, b, match_id) = tokio::join!(
        read_until(&mut over_socket, true, |_| false),
        read_until(&mut over_rest, true, |_| false),
        studio
    );
    for (seen, token) in [(&a, "a1"), (&b, "b2")] {
        let k = common::kinds(seen);
        assert!(k.contains(&"proposed") && k.contains(&"matched"), "{k:?}");
        assert_eq!(
            seen.last(),
            Some(&SearchMessage::Assigned {
                connection: "203.0.113.7:7777".into(),
                data: json!({"map": "dust", "joinToken": token}),
            }),
            "{k:?}"
        );
        let matched = seen.iter().find_map(|m| match m {
            SearchMessage::Matched { match_ } => Some(match_["matchId"].clone()),
            _ => None,
        });
        assert_eq!(matched, Some(json!(match_id)));
    }
    let studio_view = backend.ticket(&ben.ticket_id).await.unwrap();
    assert_eq!(
        studio_view.assignment.unwrap()["connection"],
        "203.0.113.7:7777"
    );
}

#[tokio::test]
async fn a_decline_fails_the_decliner_and_requeues_the_other_on_both_transports() {
    let dev = common::Dev::start();
    let backend = BackendClient::new(&dev.base, &dev.project, &dev.key).unwrap();
    backend
        .put_game_mode("sdk-decline", &lifecycle_mode("sdk-decline"))
        .await
        .unwrap();
    let (socket, rest) = common::clients(&dev);
    // Each transport declines once while the other accepts.
    for (decliner_rest, pair) in [(false, ["ana", "ben"]), (true, ["cy", "di"])] {
        let decliner = ticket(&backend, "sdk-decline", pair[0]).await;
        let other = ticket(&backend, "sdk-decline", pair[1]).await;
        let (d, o) = if decliner_rest {
            (&rest, &socket)
        } else {
            (&socket, &rest)
        };
        let mut declining = d.search(&decliner.token).await.unwrap();
        let mut accepting = o.search(&other.token).await.unwrap();
        // One accepts first, then the other declines: the order is fixed.
        let accepted = read_until(&mut accepting, true, |m| m.kind() == "proposed").await;
        assert_eq!(
            common::kinds(&accepted).last(),
            Some(&"proposed"),
            "{accepted:?}"
        );
        let declined = read_until(&mut declining, false, |_| false).await;
        assert!(
            common::kinds(&declined).contains(&"proposed"),
            "{declined:?}"
        );
        assert!(
            matches!(declined.last(), Some(SearchMessage::Failed { code, .. }) if code == "MATCH_DECLINED"),
            "{declined:?}"
        );
        // The one who accepted is back in the queue, its search still open.
        let requeued = read_until(&mut accepting, true, |m| m.kind() == "requeued").await;
        assert_eq!(
            common::kinds(&requeued).last(),
            Some(&"requeued"),
            "{requeued:?}"
        );
        assert_eq!(
            backend.ticket(&other.ticket_id).await.unwrap().status,
            "searching"
        );
        // Requeued, the socket has no proposal to answer: it refuses as
        // the server refuses an answer without one (over REST the server
        // takes the same answer to the closed proposal again, idempotently).
        if decliner_rest {
            let refused = accepting.decline().await.unwrap_err();
            assert_eq!(refused.code(), Some("NOT_PROPOSED"), "{refused}");
        }
        accepting.cancel().await.unwrap();
        let seen = read_until(&mut accepting, true, |_| false).await;
        let k = common::kinds(&seen);
        assert_eq!(k.last(), Some(&"cancelled"), "{k:?}");
        assert!(!k.contains(&"matched"), "{k:?}");
    }
}

/// Over REST, an assignment timeout is reported as `assignment_timeout`
/// then `requeued`, and a studio's release as `requeued` only, from the
/// server's own released statuses (their `reason`, docs/searching.md).
#[tokio::test]
async fn over_rest_an_assignment_timeout_is_told_and_a_release_is_a_requeue() {
    let dev = common::Dev::start();
    let backend = BackendClient::new(&dev.base, &dev.project, &dev.key).unwrap();
    let (_, rest) = common::clients(&dev);
    for (name, wait, release) in [
        ("sdk-rest-timeout", 1, false),
        ("sdk-rest-release", 60, true),
    ] {
        let mut mode = common::duel(name, "http://127.0.0.1:9/hook");
        mode["assignment"] = json!({"waitSeconds": wait});
        backend.put_game_mode(name, &mode).await.unwrap();
        let mut searches = Vec::new();
        for player in ["ana", "ben"] {
            let ticket = ticket(&backend, name, player).await;
            searches.push(rest.search(&ticket.token).await.unwrap());
        }
        let mut seen = Vec::new();
        for search in &mut searches {
            seen.push(
                read_until(search, true, |m| matches!(m, SearchMessage::Matched { .. })).await,
            );
        }
        if release {
            let SearchMessage::Matched { match_ } = seen[0].last().unwrap() else {
                unreachable!()
            };
            backend
                .release(match_["matchId"].as_str().unwrap())
                .await
                .unwrap();
        }
        for (search, seen) in searches.iter_mut().zip(&mut seen) {
            seen.extend(
                read_until(search, true, |m| {
                    matches!(m, SearchMessage::Requeued { .. })
                })
                .await,
            );
            let kinds: Vec<&str> = common::kinds(seen)
                .into_iter()
                .filter(|k| *k != "status")
                .collect();
            let expected: &[&str] = if release {
                &["searching", "matched", "requeued"]
            } else {
                &["searching", "matched", "assignment_timeout", "requeued"]
            };
            assert_eq!(kinds, expected, "{name}");
        }
    }
}
