//! The order in which the compiled code issues a kernel's memory instructions and barriers, and
//! where its warps wait: read off the SASS that ptxas makes of the PTX, so that a lifted kernel's loads
//! go in the order and runs the hardware issues them (docs/trace-format.md, "Load order and
//! runs"), not in PTX order. ptxas hoists and regroups loads, and on deep or narrow blocks that
//! decides how much reuse the L1 keeps: lifted in PTX order with one unbounded run, star4 at
//! 1×16×64 reads half the L2 sectors the H200 measures.
//!
//! Each instruction of the PTX is tagged with its own line number (`.loc`), ptxas compiles with
//! `-lineinfo`, and `nvdisasm -g` prints every SASS instruction under the PTX line it came from,
//! so each `LDG`/`STG`/`RED`/`ATOMG`/`LDS`/`STS`/`BAR.SYNC`/`SHFL` names its PTX step exactly. A run
//! of loads ends where an instruction reads a register a load of the run writes, or at a branch,
//! barrier or exit (the rule of `validation/sass_runs.py`, measured in docs/model.md,
//! "Schedule").

use std::collections::{HashMap, HashSet};

/// One global or shared memory instruction, or barrier, of the SASS, in issue order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Issued {
    /// The PTX line of the access it compiles.
    pub line: usize,
    /// A global load (`LDG`), whose result the warp may wait for.
    pub load: bool,
    /// The warp waits after this load: the next instruction reads a value loaded in its run.
    pub ends_run: bool,
    /// An atomic ptxas aggregates over the warp: its PTX line also compiled to a `VOTEU.ANY`
    /// (the active lanes' mask; `POPC` counts them and one lane's `RED` adds the count), what it
    /// does for a warp-uniform address and operand.
    pub aggregated: bool,
    /// The instruction carries a guard predicate (`@P0`, `@!P1`; not `@PT`): ptxas predicated
    /// it instead of branching around it, so a warp issues it even with no lane meeting its
    /// condition.
    pub predicated: bool,
    /// Bytes a lane loads, for `LDG` and `LDS` (4, 8 or 16, from `.64`/`.128`; 1 and 2 byte
    /// loads count as 4); 0 for the others.
    pub bytes: u8,
    /// Instructions (`NOP`s left out) between the previous memory instruction or barrier of the
    /// function, in code order, and this one; for the first, from the function's start.
    pub instructions_before: u32,
}

/// What the SASS says of every function, by (mangled) entry name: its memory instructions and
/// barriers in issue order, and the size of its code.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IssueOrder {
    /// The memory instructions and barriers, in issue order.
    pub functions: HashMap<String, Vec<Issued>>,
    /// Bytes of code (16 per instruction, the alignment padding at the end included): what a
    /// launch fetches through the L2 before it runs (docs/model.md, "L2", the launch's own reads).
    pub code_bytes: HashMap<String, u64>,
    /// SASS instructions by the PTX line they came from, `NOP`s left out (what a warp issues
    /// for one run of that line; a line ptxas copies, unrolling a loop, counts every copy).
    pub instructions_by_line: HashMap<String, HashMap<usize, u32>>,
}

impl IssueOrder {
    /// No function known: every access in PTX order.
    pub fn new() -> IssueOrder {
        IssueOrder::default()
    }

    /// The memory instructions and barriers of `function`, in issue order.
    pub fn get(&self, function: &str) -> Option<&Vec<Issued>> {
        self.functions.get(function)
    }
}

impl<const N: usize> From<[(String, Vec<Issued>); N]> for IssueOrder {
    fn from(functions: [(String, Vec<Issued>); N]) -> IssueOrder {
        IssueOrder {
            functions: HashMap::from(functions),
            code_bytes: HashMap::new(),
            instructions_by_line: HashMap::new(),
        }
    }
}

impl std::ops::Index<&str> for IssueOrder {
    type Output = Vec<Issued>;

    fn index(&self, function: &str) -> &Vec<Issued> {
        &self.functions[function]
    }
}

/// The PTX with a `.loc` before every instruction giving its own line number (existing `.file`
/// and `.loc` directives dropped), so that ptxas's line table maps SASS back to PTX lines.
pub fn annotate(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len() * 2);
    let mut depth = 0i64;
    let mut filed = false;
    for (i, line) in ptx.lines().enumerate() {
        let s = line.trim();
        if s.starts_with(".loc") || s.starts_with(".file") {
            out.push('\n'); // dropped: ptxas would read their lines instead of ours
            continue;
        }
        if depth > 0 && is_instruction(s) {
            out.push_str(&format!(".loc 1 {} 0 ", i + 1));
        }
        depth += s.matches('{').count() as i64 - s.matches('}').count() as i64;
        out.push_str(line);
        out.push('\n');
        if !filed && s.starts_with(".address_size") {
            out.push_str(".file 1 \"lifted.ptx\"\n");
            filed = true;
        }
    }
    out
}

/// Whether a trimmed PTX line is an instruction (`@%p bra $L;`, `ld.global…;`).
fn is_instruction(s: &str) -> bool {
    let body = match s.strip_prefix('@') {
        Some(rest) => rest
            .split_once(char::is_whitespace)
            .map_or("", |(_, r)| r.trim_start()),
        None => s,
    };
    body.starts_with(|c: char| c.is_ascii_lowercase()) && s.ends_with(';')
}

/// The issue order read off `nvdisasm -g` output of a cubin compiled from [`annotate`]d PTX
/// (whose `.loc` directives carry the original PTX's line numbers).
pub fn parse(disassembly: &str) -> IssueOrder {
    let mut order = IssueOrder::new();
    let mut function: Option<String> = None;
    let mut line = 0usize;
    let mut instructions: Vec<(usize, String)> = Vec::new();
    let mut finish = |name: Option<String>, ins: &mut Vec<(usize, String)>| {
        if let Some(name) = name {
            order.code_bytes.insert(name.clone(), 16 * ins.len() as u64);
            let opcode = |text: &str| {
                let op = text.split_whitespace().find(|w| !w.starts_with('@'));
                op.unwrap_or("").split('.').next().unwrap_or("").to_string()
            };
            // after the last `EXIT` only the branch to itself that ends every function is left
            let end = (ins.iter()).rposition(|(_, text)| opcode(text) == "EXIT");
            let mut by_line: HashMap<usize, u32> = HashMap::new();
            for (i, (line, text)) in ins.iter().enumerate() {
                let op = opcode(text);
                if op != "NOP" && !(op == "BRA" && end.is_some_and(|e| i > e)) {
                    *by_line.entry(*line).or_default() += 1;
                }
            }
            order.instructions_by_line.insert(name.clone(), by_line);
            order.functions.insert(name, runs(ins));
        }
        ins.clear();
    };
    for text in disassembly.lines() {
        let t = text.trim();
        if let Some(name) = t.strip_prefix(".text.").and_then(|r| r.strip_suffix(':')) {
            finish(function.take(), &mut instructions);
            function = Some(name.to_string());
            continue;
        }
        if let Some(rest) = t.strip_prefix("//## File") {
            if let Some(n) = rest
                .rsplit_once("line ")
                .and_then(|(_, n)| n.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|n| n.parse::<usize>().ok())
            {
                line = n;
            }
            continue;
        }
        // `/*0120*/   LDG.E.64 R4, desc[UR4][R2.64] ;`
        if function.is_some()
            && let Some(start) = t.find("*/")
            && t.starts_with("/*")
        {
            let ins = t[start + 2..].trim();
            if let Some(ins) = ins.strip_suffix(';') {
                instructions.push((line, ins.trim().to_string()));
            }
        }
    }
    finish(function, &mut instructions);
    order
}

/// Registers an operand list reads (`R4.64` reads R4 and R5; `RZ` and uniform registers none).
fn registers_read(operands: &str) -> HashSet<u32> {
    let mut read = HashSet::new();
    let bytes = operands.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let starts = bytes[i] == b'R' && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric());
        if starts {
            let digits: String = operands[i + 1..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let Ok(r) = digits.parse::<u32>() {
                let after = &operands[i + 1 + digits.len()..];
                if !after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                    read.insert(r);
                    if after.starts_with(".64") {
                        read.insert(r + 1);
                    }
                }
                i += 1 + digits.len();
                continue;
            }
        }
        i += 1;
    }
    read
}

/// 4-byte words a lane of load `op` moves: 4 for `.128`, 2 for `.64`, else 1.
fn lane_words(op: &str) -> u32 {
    if op.contains(".128") {
        4
    } else if op.contains(".64") {
        2
    } else {
        1
    }
}

/// The global memory instructions of one function with their runs marked.
fn runs(instructions: &[(usize, String)]) -> Vec<Issued> {
    // PTX lines whose code takes a vote of the warp's active lanes: an atomic of such a line is
    // aggregated
    let voting: HashSet<usize> = (instructions.iter())
        .filter(|(_, ins)| {
            let op = ins.split_whitespace().find(|w| !w.starts_with('@'));
            op.is_some_and(|op| op.starts_with("VOTEU.ANY") || op.starts_with("VOTE.ANY"))
        })
        .map(|(line, _)| *line)
        .collect();
    let mut out: Vec<Issued> = Vec::new();
    let mut pending: HashSet<u32> = HashSet::new();
    let mut since_last = 0u32;
    for (line, ins) in instructions {
        let listed = out.len();
        let predicated = ins
            .strip_prefix('@')
            .and_then(|r| r.split_whitespace().next())
            .is_some_and(|p| !matches!(p.trim_start_matches('!'), "PT" | "UPT"));
        // a guard predicate (`@P0`, `@!UP1`) is not a register read that waits
        let ins = match ins.strip_prefix('@') {
            Some(rest) => rest.split_once(char::is_whitespace).map_or("", |(_, r)| r),
            None => ins.as_str(),
        }
        .trim();
        let op = ins.split_whitespace().next().unwrap_or("");
        let operands = &ins[op.len()..];
        let is_store = op.starts_with("ST") || op.starts_with("RED");
        // a store or reduction reads every operand; others read all but their destination
        let sources = if is_store {
            operands
        } else {
            operands.split_once(',').map_or("", |(_, r)| r)
        };
        let waits = !pending.is_empty()
            && (registers_read(sources).iter().any(|r| pending.contains(r))
                || matches!(op.split('.').next(), Some("EXIT" | "BAR" | "BRA" | "RET")));
        if waits {
            if let Some(last) = out.iter_mut().rev().find(|a| a.load) {
                last.ends_run = true;
            }
            pending.clear();
        }
        let family = op.split('.').next().unwrap_or("");
        match family {
            "LDG" => {
                let width = lane_words(op);
                let dest = operands.split(',').next().unwrap_or("");
                if let Some(first) = registers_read(dest).into_iter().min() {
                    pending.extend(first..first + width);
                }
                out.push(Issued {
                    line: *line,
                    load: true,
                    ends_run: false,
                    aggregated: false,
                    predicated,
                    bytes: 4 * width as u8,
                    instructions_before: 0,
                });
            }
            // shared accesses and barriers hold their place among the global ones
            "STG" | "RED" | "REDG" | "ATOMG" | "LDS" | "STS" => out.push(Issued {
                line: *line,
                load: false,
                ends_run: false,
                aggregated: matches!(family, "RED" | "REDG" | "ATOMG") && voting.contains(line),
                predicated,
                bytes: if family == "LDS" {
                    4 * lane_words(op) as u8
                } else {
                    0
                },
                instructions_before: 0,
            }),
            "BAR" if op.contains(".SYNC") => out.push(Issued {
                line: *line,
                load: false,
                ends_run: false,
                aggregated: false,
                predicated,
                bytes: 0,
                instructions_before: 0,
            }),
            // a warp shuffle is a step of the trace too (one data-pipe wavefront)
            "SHFL" => out.push(Issued {
                line: *line,
                load: false,
                ends_run: false,
                aggregated: false,
                predicated,
                bytes: 0,
                instructions_before: 0,
            }),
            _ => {}
        }
        if out.len() > listed {
            out[listed].instructions_before = since_last;
            since_last = 0;
        } else if family != "NOP" {
            since_last += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotation_tags_each_instruction_with_its_own_line_and_nothing_else() {
        let ptx = ".version 8.5\n.address_size 64\n.visible .entry k(\n.param .u64 p\n)\n{\n.reg .b32 %r<3>;\nmov.u32 %r1, %tid.x;\n@%p1 bra $L__BB0_2;\n$L__BB0_2:\nret;\n}\n";
        let out = annotate(ptx);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[2], ".file 1 \"lifted.ptx\"");
        // the parameter list and declarations get none; the instructions their original lines
        assert_eq!(out.matches(".loc").count(), 3);
        assert!(out.contains(".loc 1 8 0 mov.u32 %r1, %tid.x;"));
        assert!(out.contains(".loc 1 9 0 @%p1 bra $L__BB0_2;"));
        assert!(out.contains(".loc 1 11 0 ret;"));
        assert!(!out.contains(".loc 1 10"));
    }

    #[test]
    fn instructions_count_by_line_without_nops_or_the_branch_to_itself_after_the_exit() {
        let sass = "\
.text.k:
        //## File \"lifted.ptx\", line 10
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   IMAD R2, R0, 0x4, RZ ;
        //## File \"lifted.ptx\", line 12
        /*0020*/              @!P0 EXIT ;
        /*0030*/                   LDG.E R4, desc[UR4][R2.64] ;
        //## File \"lifted.ptx\", line 13
        /*0040*/                   EXIT ;
.L_x_0:
        /*0050*/                   BRA `(.L_x_0) ;
        /*0060*/                   NOP ;
";
        let order = parse(sass);
        let by_line = &order.instructions_by_line["k"];
        assert_eq!(by_line[&10], 2);
        assert_eq!(by_line[&12], 2);
        assert_eq!(by_line[&13], 1);
        assert_eq!(by_line.values().sum::<u32>(), 5);
        // the code fetched is all of it, padding included
        assert_eq!(order.code_bytes["k"], 7 * 16);
    }

    #[test]
    fn a_run_ends_at_the_first_instruction_that_reads_a_loaded_register() {
        let sass = "\
.text.k:
        //## File \"lifted.ptx\", line 11
        /*0000*/                   LDG.E.64.CONSTANT R4, desc[UR4][R2.64+0x8] ;
        //## File \"lifted.ptx\", line 10
        /*0010*/                   LDG.E.64.CONSTANT R6, desc[UR4][R2.64] ;
        //## File \"lifted.ptx\", line 12
        /*0020*/                   DADD R8, R4, R6 ;
        //## File \"lifted.ptx\", line 14
        /*0030*/                   LDG.E R10, desc[UR4][R2.64+0x10] ;
        //## File \"lifted.ptx\", line 15
        /*0040*/                   STG.E.64 desc[UR4][R12.64], R8 ;
        //## File \"lifted.ptx\", line 16
        /*0050*/                   EXIT ;
";
        let order = parse(sass);
        let k = &order["k"];
        let lines: Vec<usize> = k.iter().map(|a| a.line).collect();
        assert_eq!(lines, vec![11, 10, 14, 15]);
        assert_eq!(
            k.iter().map(|a| a.ends_run).collect::<Vec<_>>(),
            vec![false, true, true, false]
        );
        assert!(!k[3].load);
    }

    #[test]
    fn a_functions_code_is_sixteen_bytes_per_instruction() {
        let sass = "\
.text.a:
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   EXIT ;
        /*0020*/                   BRA 0x20;
        /*0030*/                   NOP;
.text.b:
        /*0000*/                   EXIT ;
";
        let order = parse(sass);
        assert_eq!(order.code_bytes["a"], 64);
        assert_eq!(order.code_bytes["b"], 16);
    }

    #[test]
    fn a_store_reading_only_addresses_and_other_registers_does_not_end_a_run() {
        let ins = vec![
            (1, "LDG.E R4, desc[UR4][R2.64]".to_string()),
            (2, "STG.E desc[UR4][R8.64], R10".to_string()),
            (3, "LDG.E R5, desc[UR4][R2.64+0x4]".to_string()),
            (4, "@P0 BRA 0x100".to_string()),
        ];
        let r = runs(&ins);
        assert_eq!(r.len(), 3);
        assert!(!r[0].ends_run);
        assert!(r[2].ends_run, "the branch waits for both loads");
        // R40 is not R4; R4.64 reads R4 and R5
        assert!(!registers_read("R40, R3").contains(&4));
        assert_eq!(registers_read("desc[UR4][R4.64]"), HashSet::from([4, 5]));
    }

    #[test]
    fn each_memory_instruction_knows_the_instructions_since_the_last_nops_left_out() {
        let ins = vec![
            (1, "S2R R0, SR_TID.X".to_string()),
            (2, "STG.E desc[UR4][R2.64], R5".to_string()),
            (3, "STG.E desc[UR4][R2.64+0x4], R7".to_string()),
            (4, "FFMA R7, R7, R6, 1".to_string()),
            (4, "NOP".to_string()),
            (4, "@!P0 BRA 0x100".to_string()),
            (5, "STG.E desc[UR4][R2.64+0x8], R7".to_string()),
            (6, "BAR.SYNC.DEFER_BLOCKING 0x0".to_string()),
            (7, "STG.E desc[UR4][R2.64+0xc], R7".to_string()),
        ];
        let r = runs(&ins);
        let gaps: Vec<u32> = r.iter().map(|a| a.instructions_before).collect();
        assert_eq!(gaps, vec![1, 0, 2, 0, 0]);
    }
}
