//! MCP-TL: tools — listing (shapes, unique names, pagination, bad cursors), unknown tools,
//! and the result of calling the tool the profile names as safe.

use serde_json::{Value, json};

use super::expect::{Era, era, refused_with, request, result_of};
use crate::engine::finding::{Finding, Step};
use crate::mcp::part::McpPart;
use crate::mcp::wire::Wire;

/// Pages followed at most (a server whose cursors never end fails MCP-TL-1).
const MAX_PAGES: usize = 50;

/// n/a unless the server advertises the tools capability.
fn tools_offered(part: &McpPart) -> Step<()> {
    if part.capabilities()?.get("tools").is_some() {
        Ok(())
    } else {
        Err(Finding::unsupported(
            "n/a: the server does not advertise the tools capability",
        ))
    }
}

/// Every tool over every page (checked as it goes: MCP-TL-1).
async fn all_tools(w: &mut Wire, e: &Era) -> Step<Vec<Value>> {
    let mut tools: Vec<Value> = Vec::new();
    let mut cursor: Option<String> = None;
    for page in 0..MAX_PAGES {
        let params = cursor
            .as_ref()
            .map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let a = request(w, e, "tools/list", params).await?;
        let r = result_of(&a, &format!("tools/list page {}", page + 1))?;
        let Some(list) = r.get("tools").and_then(Value::as_array) else {
            return Err(Finding::fail(
                "/result/tools",
                json!("an array"),
                r.clone(),
                "tools/list: no tools array",
            ));
        };
        for t in list {
            check_tool(t, &tools)?;
            tools.push(t.clone());
        }
        match r.get("nextCursor") {
            None | Some(Value::Null) => return Ok(tools),
            Some(Value::String(c)) => cursor = Some(c.clone()),
            Some(other) => {
                return Err(Finding::fail(
                    "/result/nextCursor",
                    json!("a string"),
                    other.clone(),
                    "tools/list: nextCursor is not a string",
                ));
            }
        }
    }
    Err(Finding::fail(
        "/result/nextCursor",
        json!("an end"),
        json!(cursor),
        format!("tools/list: still a nextCursor after {MAX_PAGES} pages"),
    ))
}

/// One tool entry: a new string name, object schemas of type object that compile.
fn check_tool(t: &Value, before: &[Value]) -> Step<()> {
    let Some(name) = t.get("name").and_then(Value::as_str) else {
        return Err(Finding::fail(
            "/name",
            json!("a string"),
            t.clone(),
            "a tool without a string name",
        ));
    };
    if before
        .iter()
        .any(|b| b.get("name").and_then(Value::as_str) == Some(name))
    {
        return Err(Finding::fail(
            "/name",
            json!("unique names"),
            json!(name),
            format!("tool {name:?} is listed twice"),
        ));
    }
    for (member, required) in [("inputSchema", true), ("outputSchema", false)] {
        match t.get(member) {
            None if !required => {}
            Some(s) if s.get("type") == Some(&json!("object")) => {
                if let Err(e) = jsonschema::validator_for(s)
                    // A reference the harness cannot resolve offline is not a broken schema.
                    && !matches!(e.kind(), jsonschema::error::ValidationErrorKind::Referencing(_))
                {
                    return Err(Finding::fail(
                        &format!("/{member}"),
                        json!("a valid JSON Schema"),
                        s.clone(),
                        format!("tool {name:?}: {member} does not compile: {e}"),
                    ));
                }
            }
            other => {
                return Err(Finding::fail(
                    &format!("/{member}"),
                    json!({"type": "object"}),
                    json!(other),
                    format!("tool {name:?}: {member} must be a JSON Schema object of type object"),
                ));
            }
        }
    }
    Ok(())
}

/// MCP-TL-1: tools/list shapes over every page.
pub async fn list(w: &mut Wire, part: &McpPart) -> Step<()> {
    tools_offered(part)?;
    let e = era(w, part).await?;
    all_tools(w, &e).await.map(|_| ())
}

/// MCP-TL-2: a cursor never issued is refused with -32602 (SHOULD).
pub async fn bad_cursor(w: &mut Wire, part: &McpPart) -> Step<()> {
    tools_offered(part)?;
    let e = era(w, part).await?;
    let a = request(
        w,
        &e,
        "tools/list",
        json!({"cursor": "conform-never-issued-cursor"}),
    )
    .await?;
    refused_with(&a, &[-32602], "tools/list with a cursor never issued")
}

/// MCP-TL-3: an unknown tool is a -32602 protocol error (an isError result is warned).
pub async fn unknown_tool(w: &mut Wire, part: &McpPart) -> Step<()> {
    tools_offered(part)?;
    let e = era(w, part).await?;
    let a = request(
        w,
        &e,
        "tools/call",
        json!({"name": "conform-no-such-tool", "arguments": {}}),
    )
    .await?;
    if a.result().and_then(|r| r.get("isError")) == Some(&json!(true)) {
        w.warnings.push(Finding::warn("/result/isError", json!({"jsonrpc_error_code": -32602}), a.observed(), "an unknown tool was answered with an isError result; the specification makes it a -32602 protocol error"));
        return Ok(());
    }
    refused_with(&a, &[-32602], "tools/call of an unknown tool")
}

/// MCP-TL-4: the safe tool's result: content blocks, isError, structuredContent vs outputSchema.
pub async fn call_result(w: &mut Wire, part: &McpPart) -> Step<()> {
    tools_offered(part)?;
    let Some((name, args)) = part.profile.safe_call() else {
        return Err(Finding::untested(
            "the profile names no [mcp] safe_tool (a tool the harness may call without side effects)",
        ));
    };
    let e = era(w, part).await?;
    let tools = all_tools(w, &e).await?;
    let Some(tool) = tools
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(&name))
    else {
        // A profile naming a tool the server does not have is the profile's mistake.
        return Err(Finding::untested(format!(
            "the profile's [mcp] safe_tool {name:?} is not among the {} tools tools/list lists",
            tools.len()
        )));
    };
    let a = request(
        w,
        &e,
        "tools/call",
        json!({"name": name, "arguments": args}),
    )
    .await?;
    let r = result_of(&a, &format!("tools/call {name}"))?;
    result_shape(r, tool.get("outputSchema"))
}

/// The members of one tools/call result.
fn result_shape(r: &Value, output_schema: Option<&Value>) -> Step<()> {
    let Some(content) = r.get("content").and_then(Value::as_array) else {
        return Err(Finding::fail(
            "/result/content",
            json!("an array"),
            r.clone(),
            "tools/call result without a content array",
        ));
    };
    if let Some((i, b)) = content
        .iter()
        .enumerate()
        .find(|(_, b)| !b.get("type").is_some_and(Value::is_string))
    {
        return Err(Finding::fail(
            &format!("/result/content/{i}/type"),
            json!("a string"),
            b.clone(),
            "a content block without a type",
        ));
    }
    let is_error = match r.get("isError") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(Finding::fail(
                "/result/isError",
                json!("a boolean"),
                other.clone(),
                "isError is not a boolean",
            ));
        }
    };
    let (Some(schema), false) = (output_schema, is_error) else {
        return Ok(());
    };
    let Some(sc) = r.get("structuredContent") else {
        return Err(Finding::fail(
            "/result/structuredContent",
            json!("present (the tool declares an outputSchema)"),
            r.clone(),
            "the tool declares an outputSchema but its result has no structuredContent",
        ));
    };
    let v = jsonschema::validator_for(schema).map_err(|e| {
        if matches!(
            e.kind(),
            jsonschema::error::ValidationErrorKind::Referencing(_)
        ) {
            return Finding::unsupported(format!(
                "the tool's outputSchema has a reference the harness cannot resolve offline: {e}"
            ));
        }
        Finding::fail(
            "/outputSchema",
            json!("a valid JSON Schema"),
            schema.clone(),
            e.to_string(),
        )
    })?;
    if let Some(err) = v.iter_errors(sc).next() {
        return Err(Finding::fail(
            &format!("/result/structuredContent{}", err.instance_path()),
            json!("valid against the tool's outputSchema"),
            sc.clone(),
            format!("structuredContent does not match the outputSchema: {err}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_entries_and_results_are_judged() {
        let ok = json!({"name": "a", "inputSchema": {"type": "object"}});
        assert!(check_tool(&ok, &[]).is_ok());
        assert!(
            check_tool(&ok, std::slice::from_ref(&ok)).is_err(),
            "duplicate name"
        );
        assert!(
            check_tool(
                &json!({"name": "b", "inputSchema": {"type": "string"}}),
                &[]
            )
            .is_err()
        );
        assert!(check_tool(&json!({"name": "c"}), &[]).is_err());
        let schema =
            json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}});
        let good =
            json!({"content": [{"type": "text", "text": "x"}], "structuredContent": {"n": 1}});
        assert!(result_shape(&good, Some(&schema)).is_ok());
        let wrong = json!({"content": [], "structuredContent": {"n": "one"}});
        assert!(result_shape(&wrong, Some(&schema)).is_err());
        assert!(
            result_shape(&json!({"content": []}), Some(&schema)).is_err(),
            "structuredContent missing"
        );
        assert!(result_shape(&json!({"content": [], "isError": true}), Some(&schema)).is_ok());
        assert!(result_shape(&json!({"content": [{"text": "x"}]}), None).is_err());
        assert!(result_shape(&json!({"content": [], "isError": "no"}), None).is_err());
    }
}
