//! `found` and `needed` of a searching status (docs/searching.md#statuses): the worker stores
//! them beside the reason's `code`; every status shows them top-level and
//! the `waitingReason` without them.

use serde_json::Value;

/// A stored waiting status split into the reason and its `found` /
/// `needed` seat counts (`None` when the stored text has none, e.g. a
/// record written before they were kept, or not JSON).
pub fn split(stored: Option<&str>) -> (Option<Value>, Option<u32>, Option<u32>) {
    let Some(mut reason) = stored.and_then(|r| serde_json::from_str::<Value>(r).ok()) else {
        return (None, None, None);
    };
    let mut take = |key: &str| {
        reason
            .as_object_mut()
            .and_then(|o| o.remove(key))
            .and_then(|v| v.as_u64())
            .and_then(|v| u32::try_from(v).ok())
    };
    let found = take("found");
    let needed = take("needed");
    (Some(reason), found, needed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn found_and_needed_move_out_of_the_reason() {
        let (reason, found, needed) = split(Some(
            r#"{"code":"NOT_ENOUGH_PLAYERS","seatsWaiting":3,"seatsNeeded":10,"found":3,"needed":8}"#,
        ));
        assert_eq!(
            reason,
            Some(json!({"code": "NOT_ENOUGH_PLAYERS", "seatsWaiting": 3, "seatsNeeded": 10}))
        );
        assert_eq!((found, needed), (Some(3), Some(8)));
        assert_eq!(split(Some(r#"{"code":"NO_EXACT_SEATING"}"#)).1, None);
        assert_eq!(split(None), (None, None, None));
    }
}
