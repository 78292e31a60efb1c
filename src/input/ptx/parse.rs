//! PTX text into kernels: each `.entry` with its parameters and its body as a list of labels
//! and instructions, every one with its line (for errors). Only the statement grammar nvcc
//! emits is read; declarations (`.reg`, `.shared`, `.pragma`, …) are kept as directives.

use crate::error::{Error, Result};

/// One `.entry` of a PTX file.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The (mangled) name.
    pub name: String,
    /// Line of the `.entry` directive.
    pub line: usize,
    /// Parameters in order: name and PTX type (`u64`, `u32`, `b8[16]`, …).
    pub params: Vec<(String, String)>,
    /// The body's statements in order.
    pub body: Vec<Statement>,
    /// The file's `.shared` declarations outside every entry (a device function's static shared
    /// array, `__shared__ float warps[8]` in a helper nvcc inlined, is declared there).
    pub module_shared: Vec<String>,
}

/// One statement of an entry's body.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    /// 1-based line in the file.
    pub line: usize,
    /// What it is.
    pub kind: StatementKind,
}

/// A label, an instruction or a directive.
#[derive(Debug, Clone, PartialEq)]
pub enum StatementKind {
    /// `NAME:`
    Label(String),
    /// `[@[!]%p] opcode operands;`
    Instruction(Instruction),
    /// `.reg …;`, `.shared …;`, `.pragma …;` and other declarations.
    Directive(String),
}

/// One instruction.
#[derive(Debug, Clone, PartialEq)]
pub struct Instruction {
    /// The guarding predicate register and whether it is negated (`@!%p`).
    pub predicate: Option<(String, bool)>,
    /// Opcode with its modifiers, split at the dots: `["ld", "global", "nc", "f64"]`.
    pub opcode: Vec<String>,
    /// Operands as written, split at the top-level commas.
    pub operands: Vec<String>,
}

/// The text with comments blanked out (line breaks kept, so offsets keep their lines).
fn strip_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                if bytes[i] == b'\n' {
                    out.push('\n');
                }
                i += 1;
            }
            i += 2;
        } else if bytes[i] == b'"' {
            // strings (in `.pragma "nounroll"`) are kept whole
            let start = i;
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                i += 1;
            }
            i = (i + 1).min(bytes.len());
            out.push_str(&text[start..i]);
        } else {
            let c = text[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Every `.entry` of a PTX file, in file order; `source` names the file in errors.
pub fn parse(text: &str, source: &str) -> Result<Vec<Entry>> {
    let text = strip_comments(text);
    let err = |offset: usize, msg: String| {
        Error::new(source, format!("line {}: {msg}", line_of(&text, offset)))
    };
    let mut entries = Vec::new();
    let mut module_shared = Vec::new();
    let mut search = 0;
    while let Some(found) = text[search..].find(".entry") {
        let at = search + found;
        module_shared.extend(shared_declarations(&text[search..at]));
        let after = at + ".entry".len();
        let open = text[after..]
            .find('(')
            .map(|o| after + o)
            .ok_or_else(|| err(at, "`.entry` without a parameter list".into()))?;
        let name = text[after..open].trim().to_string();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_$.".contains(c))
        {
            return Err(err(at, format!("`.entry` with a malformed name '{name}'")));
        }
        let close = text[open..]
            .find(')')
            .map(|o| open + o)
            .ok_or_else(|| err(open, format!("the parameter list of {name} does not end")))?;
        let mut params = Vec::new();
        for p in text[open + 1..close]
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            let words: Vec<&str> = p.split_whitespace().collect();
            if words.first() != Some(&".param") || words.len() < 3 {
                return Err(err(open, format!("malformed parameter '{p}' of {name}")));
            }
            let pname = words[words.len() - 1];
            let (pname, array) = match pname.find('[') {
                Some(b) => (&pname[..b], &pname[b..]),
                None => (pname, ""),
            };
            let ty = words[1..words.len() - 1]
                .iter()
                .rfind(|w| w.starts_with('.') && !matches!(**w, ".align" | ".ptr" | ".global"))
                .map_or("", |w| w.trim_start_matches('.'));
            params.push((pname.to_string(), format!("{ty}{array}")));
        }
        let brace = text[close..]
            .find(['{', ';'])
            .map(|o| close + o)
            .ok_or_else(|| err(close, format!("{name} has no body")))?;
        if text.as_bytes()[brace] == b';' {
            // a declaration (`.extern .entry …;`): nothing to lift
            search = brace + 1;
            continue;
        }
        let mut depth = 0usize;
        let mut end = None;
        for (i, b) in text[brace..].bytes().enumerate() {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(brace + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let end = end.ok_or_else(|| err(brace, format!("the body of {name} does not end")))?;
        let body = parse_body(&text, brace + 1, end, source)?;
        entries.push(Entry {
            name,
            line: line_of(&text, at),
            params,
            body,
            module_shared: Vec::new(),
        });
        search = end + 1;
    }
    module_shared.extend(shared_declarations(&text[search..]));
    for e in &mut entries {
        e.module_shared.clone_from(&module_shared);
    }
    Ok(entries)
}

/// The `.shared` array declarations (`.shared .align 4 .b8 name[32];`) of text outside the
/// entries; `.extern` ones (dynamic shared memory) have no size and are left out.
fn shared_declarations(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_suffix(';'))
        .filter(|d| {
            d.split_whitespace().next() == Some(".shared")
                && d.ends_with(']')
                && !d.contains(".extern")
        })
        .map(str::to_string)
        .collect()
}

/// The statements between byte offsets `start` and `end` (an entry's braces).
fn parse_body(text: &str, start: usize, end: usize, source: &str) -> Result<Vec<Statement>> {
    let mut out = Vec::new();
    let mut pos = start;
    let bytes = text.as_bytes();
    while pos < end {
        while pos < end
            && (bytes[pos].is_ascii_whitespace() || bytes[pos] == b'{' || bytes[pos] == b'}')
        {
            pos += 1;
        }
        if pos >= end {
            break;
        }
        let line = line_of(text, pos);
        let stop = text[pos..end].find(';').map_or(end, |o| pos + o);
        let chunk = &text[pos..stop];
        // a label ends at its colon; what follows it starts the next statement
        if let Some(colon) = chunk.find(':') {
            let label = chunk[..colon].trim();
            if !label.is_empty()
                && !label.contains(char::is_whitespace)
                && !label.starts_with(['@', '.', '%'])
            {
                out.push(Statement {
                    line,
                    kind: StatementKind::Label(label.to_string()),
                });
                pos += colon + 1;
                continue;
            }
        }
        if stop >= end || bytes[stop] != b';' {
            return Err(Error::new(
                source,
                format!(
                    "line {line}: statement '{}' does not end with ';'",
                    chunk.trim()
                ),
            ));
        }
        pos = stop + 1;
        let chunk = chunk.trim();
        if chunk.starts_with('.') {
            out.push(Statement {
                line,
                kind: StatementKind::Directive(chunk.to_string()),
            });
            continue;
        }
        out.push(Statement {
            line,
            kind: StatementKind::Instruction(parse_instruction(chunk).ok_or_else(|| {
                Error::new(
                    source,
                    format!("line {line}: malformed instruction '{chunk}'"),
                )
            })?),
        });
    }
    Ok(out)
}

/// `[@[!]%p] opcode a, b, …` into its parts; `None` when malformed.
fn parse_instruction(s: &str) -> Option<Instruction> {
    let mut rest = s.trim();
    let mut predicate = None;
    if let Some(p) = rest.strip_prefix('@') {
        let (negated, p) = match p.strip_prefix('!') {
            Some(p) => (true, p),
            None => (false, p),
        };
        let end = p.find(char::is_whitespace)?;
        predicate = Some((p[..end].to_string(), negated));
        rest = p[end..].trim_start();
    }
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let opcode: Vec<String> = rest[..end].split('.').map(String::from).collect();
    if opcode[0].is_empty()
        || !opcode[0]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return None;
    }
    let mut operands = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for c in rest[end..].chars() {
        match c {
            '[' | '{' | '(' => depth += 1,
            ']' | '}' | ')' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            operands.push(current.trim().to_string());
            current.clear();
        } else {
            current.push(c);
        }
    }
    if depth != 0 {
        return None;
    }
    if !current.trim().is_empty() {
        operands.push(current.trim().to_string());
    }
    if operands.iter().any(String::is_empty) {
        return None;
    }
    Some(Instruction {
        predicate,
        opcode,
        operands,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_reads_into_parameters_labels_and_instructions() {
        let ptx = "// comment\n.version 9.5\n.visible .entry k(\n\t.param .u64 k_param_0,\n\t.param .u32 k_param_1\n)\n{\n\t.reg .pred %p<2>;\n\tld.param.u64 %rd1, [k_param_0];\n\t@!%p1 bra $L__BB0_2; /* x */\n$L__BB0_2:\n\tst.global.v2.f64 [%rd1+8], {%fd1, %fd2};\n\tret;\n}\n";
        let entries = parse(ptx, "k.ptx").unwrap();
        assert_eq!(entries.len(), 1);
        let e = &entries[0];
        assert_eq!(e.name, "k");
        assert_eq!(e.line, 3);
        assert_eq!(
            e.params,
            vec![
                ("k_param_0".into(), "u64".into()),
                ("k_param_1".into(), "u32".into())
            ]
        );
        let kinds: Vec<(usize, &StatementKind)> =
            e.body.iter().map(|s| (s.line, &s.kind)).collect();
        assert_eq!(
            kinds[0],
            (8, &StatementKind::Directive(".reg .pred %p<2>".into()))
        );
        let StatementKind::Instruction(bra) = kinds[2].1 else {
            panic!("not an instruction")
        };
        assert_eq!(bra.predicate, Some(("%p1".into(), true)));
        assert_eq!(bra.opcode, vec!["bra"]);
        assert_eq!(kinds[3], (11, &StatementKind::Label("$L__BB0_2".into())));
        let StatementKind::Instruction(st) = kinds[4].1 else {
            panic!("not an instruction")
        };
        assert_eq!(st.opcode, vec!["st", "global", "v2", "f64"]);
        assert_eq!(st.operands, vec!["[%rd1+8]", "{%fd1, %fd2}"]);
    }

    #[test]
    fn truncated_text_is_an_error_with_its_line() {
        let e = parse(".visible .entry k(\n.param .u64 a\n)\n{\nret\n", "t.ptx").unwrap_err();
        assert_eq!(e.to_string(), "t.ptx: line 4: the body of k does not end");
        let e = parse(".visible .entry k()\n{\n add.s32 %r1, , 1;\n}\n", "t.ptx").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.ptx: line 3: malformed instruction 'add.s32 %r1, , 1'"
        );
    }
}
