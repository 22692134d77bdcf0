use super::*;
use crate::auth::Caller;
use crate::state::ApiConfig;
use axum::extract::FromRequestParts;

/// The futures of the ticket route, which every request allocates and
/// moves: the caches' database look-ups (cold paths) are boxed so they
/// do not count here. Inline, they made these futures 25 to 100 times
/// larger, and moving them was 5 % of the server's CPU in the ticket
/// benchmark's profile.
#[tokio::test]
async fn the_ticket_route_futures_stay_small() {
    let db = matchplane_store::db::connect("sqlite::memory:")
        .await
        .unwrap();
    let state = AppState::new(db, ApiConfig::default());
    let caller = ProjectCaller {
        caller: Caller::Operator,
        project_id: "prj_1".into(),
    };
    let body: CreateTicket =
        serde_json::from_value(serde_json::json!({"gameMode": "duel", "playerId": "p"})).unwrap();
    let handler = create(caller, State(state.clone()), TypedJson(body));
    let (mut parts, ()) = axum::http::Request::new(()).into_parts();
    let auth = Caller::from_request_parts(&mut parts, &state);
    // About 0.8 and 1.1 KiB in a debug build (the key check holds the
    // cache entry, with its outage-grace times, while it checks it);
    // 19 and 20 KiB with the look-ups inline, which is what these
    // bounds catch.
    let (handler, auth) = (
        std::mem::size_of_val(&handler),
        std::mem::size_of_val(&auth),
    );
    let start = crate::routes::searches::create(
        State(state.clone()),
        crate::extract::ApiJson(
            serde_json::from_value(serde_json::json!({"ticket": "t"})).unwrap(),
        ),
    );
    let start = std::mem::size_of_val(&start);
    assert!(
        handler <= 2048,
        "the ticket handler's future is {handler} bytes"
    );
    assert!(auth <= 2048, "the API key check's future is {auth} bytes");
    // The REST search start, the other hot route: about 2.3 KiB (the
    // mode check's cache entry and the ticket store's start); its
    // database look-ups for a ticket the store lost are boxed.
    assert!(start <= 3072, "the search start's future is {start} bytes");
}

mod one_pass {
    use super::super::CreateTicket;
    use crate::extract::parse_bytes_scanned;
    use proptest::prelude::*;

    /// A JSON value's text whose objects draw their keys from two
    /// names, so that many repeat one, at any depth.
    fn value() -> BoxedStrategy<String> {
        let leaf = prop_oneof![
            Just("null".to_owned()),
            Just("true".to_owned()),
            Just("1".to_owned()),
            Just("-0.0".to_owned()),
            Just("1.5e3".to_owned()),
            Just("\"x\"".to_owned()),
            Just("\"dust\"".to_owned()),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4)
                    .prop_map(|items| format!("[{}]", items.join(","))),
                prop::collection::vec((prop::sample::select(vec!["a", "b"]), inner), 0..4)
                    .prop_map(|fields| object(&fields)),
            ]
        })
        .boxed()
    }

    fn object(fields: &[(&str, String)]) -> String {
        let fields: Vec<String> = fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
        format!("{{{}}}", fields.join(","))
    }

    /// A ticket body: its own fields, the attributes' and the party's,
    /// each maybe given twice, with values of the right type or any.
    fn body() -> impl Strategy<Value = String> {
        let attribute = prop_oneof![
            (Just("mmr"), prop_oneof![Just("1500".to_owned()), value()]),
            (
                Just("latencies"),
                prop_oneof![Just("{\"eu\":20}".to_owned()), value()]
            ),
            (
                Just("data"),
                prop_oneof![Just("{\"c\":1}".to_owned()), value()]
            ),
            (Just("build"), value()),
            (Just("maps"), value()),
        ];
        let attributes = prop::collection::vec(attribute, 0..5).prop_map(|f| object(&f));
        let member = prop_oneof![
            (Just("id"), prop_oneof![Just("\"x\"".to_owned()), value()]),
            (
                Just("members"),
                prop_oneof![Just("[\"p\"]".to_owned()), value()]
            ),
        ];
        let party = prop::collection::vec(member, 0..4).prop_map(|f| object(&f));
        let field = prop_oneof![
            1 => (Just("gameMode"), Just("\"duel\"".to_owned())),
            1 => (Just("playerId"), prop_oneof![Just("\"p\"".to_owned()), value()]),
            4 => (Just("attributes"), attributes.boxed()),
            2 => (Just("party"), party.boxed()),
            1 => (Just("extra"), value()),
        ];
        // Mostly bodies the route would take but for what is repeated:
        // the two required fields first, then any fields.
        prop::collection::vec(field, 0..4).prop_map(|more| {
            let mut fields = vec![
                ("gameMode", "\"duel\"".to_owned()),
                ("playerId", "\"p\"".to_owned()),
            ];
            fields.extend(more);
            object(&fields)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// The ticket route reads its body in one pass (its types refuse
        /// a key given twice themselves): it takes exactly the bodies the
        /// read with a scan for duplicate keys takes, as the same ticket,
        /// and refuses the others in the same words.
        #[test]
        fn the_one_pass_read_is_the_scanned_read(text in body()) {
            let scanned = parse_bytes_scanned::<CreateTicket>(text.as_bytes(), true);
            let one_pass = parse_bytes_scanned::<CreateTicket>(text.as_bytes(), false);
            prop_assert_eq!(format!("{scanned:?}"), format!("{one_pass:?}"), "{}", text);
        }
    }
}
