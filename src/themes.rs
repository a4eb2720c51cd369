//! Vega configs for `--vega-config`: the named themes of the `vega-themes`
//! package (3.0.0, vendored in `vendor/vega` as the JSON of its exports),
//! or a config object read from a file; and how a config is merged into a
//! chart's own.

use serde_json::{Map, Value};

/// The themes of `vega-themes` 3.0.0, by name.
const THEMES: &str = include_str!("../vendor/vega/vega-themes-3.0.0.json");

/// The config of the theme `name`, when `vega-themes` has one.
pub fn theme(name: &str) -> Option<Map<String, Value>> {
    let mut themes: Map<String, Value> = serde_json::from_str(THEMES).ok()?;
    match themes.remove(name)? {
        Value::Object(config) => Some(config),
        _ => None,
    }
}

/// The names of the themes, in order.
pub fn names() -> Vec<String> {
    serde_json::from_str::<Map<String, Value>>(THEMES)
        .map(|themes| themes.keys().cloned().collect())
        .unwrap_or_default()
}

/// Merges `over` into `base`: objects key by key, at every depth; any
/// other value of `over` replaces the one of `base`.
pub fn merge(base: &mut Map<String, Value>, over: &Map<String, Value>) {
    for (key, value) in over {
        match (base.get_mut(key), value) {
            (Some(Value::Object(inner)), Value::Object(value)) => merge(inner, value),
            _ => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_vendored_themes_are_there_and_configs_merge_deeply() {
        assert_eq!(names().len(), 14);
        assert!(theme("dark").unwrap().contains_key("background"));
        assert!(theme("no-such-theme").is_none());
        let mut base = json!({"axis": {"grid": true, "labelFontSize": 10}, "mark": {"color": "red"}});
        let over = json!({"axis": {"labelFontSize": 14}, "mark": "plain"});
        merge(base.as_object_mut().unwrap(), over.as_object().unwrap());
        assert_eq!(
            base,
            json!({"axis": {"grid": true, "labelFontSize": 14}, "mark": "plain"})
        );
    }
}
