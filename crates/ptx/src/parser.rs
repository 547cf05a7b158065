//! Recursive-descent parser: tokens → [`ast::Module`].
//!
//! Error recovery: a statement that fails to parse is skipped up to its `;` (or to the `}`
//! closing its scope) and parsing goes on, so one run reports many errors. A module-level
//! item that fails is skipped up to its `;` or past its balanced `{ … }` body. After
//! [`MAX_ERRORS`] errors the parser stops.
//!
//! Recursion is bounded by [`MAX_DEPTH`] across blocks, operands and initializer lists,
//! and every loop consumes at least one token per iteration, so no input can overflow the
//! stack or hang the parser.

use crate::ast::*;
use crate::diagnostic::RawError;
use crate::lexer::{Lexer, Token, TokenKind};

/// Deepest nesting of `{ }` scopes, `{ }` initializer lists and nested operands accepted.
pub(crate) const MAX_DEPTH: u32 = 64;
/// The parser gives up after this many errors.
pub(crate) const MAX_ERRORS: usize = 100;

/// An error that has already been recorded in `Parser::errors`.
struct Reported;

type PResult<T> = Result<T, Reported>;

pub(crate) struct Parser<'a> {
    src: &'a str,
    lexer: Lexer<'a>,
    /// The current token and the one after it: the grammar needs one token of lookahead
    /// beyond the current one (`label:`, `generic(`).
    cur: Token,
    next: Token,
    /// End of the last consumed token.
    prev_end: u32,
    /// Number of tokens consumed; loops compare it to check that they made progress.
    pos: usize,
    depth: u32,
    errors: Vec<RawError>,
}

impl<'a> Parser<'a> {
    /// The caller guarantees `src.len() < u32::MAX`.
    pub(crate) fn new(src: &'a str) -> Self {
        let mut lexer = Lexer::new(src);
        let cur = lexer.next_token();
        let next = lexer.next_token();
        Parser {
            src,
            lexer,
            cur,
            next,
            prev_end: 0,
            pos: 0,
            depth: 0,
            errors: Vec::new(),
        }
    }

    /// Every error found, lexer's and parser's, unsorted.
    pub(crate) fn into_errors(self) -> Vec<RawError> {
        let mut errors = self.errors;
        errors.extend(self.lexer.errors.into_iter().map(|e| RawError {
            span: e.span,
            message: e.message,
            expected: e.expected,
            found: e.found,
        }));
        errors
    }

    // ---------------------------------------------------------------- token access

    #[inline]
    fn peek(&self) -> Token {
        self.cur
    }

    #[inline]
    fn kind(&self) -> TokenKind {
        self.cur.kind
    }

    /// The kind of the token after the current one.
    #[inline]
    fn next_kind(&self) -> TokenKind {
        self.next.kind
    }

    /// Consumes the current token and returns it; at end of file, stays there.
    #[inline]
    fn bump(&mut self) -> Token {
        let t = self.cur;
        if t.kind != TokenKind::Eof {
            self.prev_end = t.end;
            self.cur = self.next;
            self.next = self.lexer.next_token();
            self.pos += 1;
        }
        t
    }

    #[inline]
    fn text(&self, t: Token) -> &'a str {
        self.src.get(t.start as usize..t.end as usize).unwrap_or("")
    }

    #[inline]
    fn at(&self, kind: TokenKind) -> bool {
        self.kind() == kind
    }

    /// The current token is the directive or modifier `.word`.
    #[inline]
    fn at_dot(&self, word: &str) -> bool {
        let t = self.peek();
        t.kind == TokenKind::Dot && self.text(t) == word
    }

    fn eat(&mut self, kind: TokenKind) -> Option<Token> {
        if self.at(kind) {
            Some(self.bump())
        } else {
            None
        }
    }

    fn prev_end(&self) -> u32 {
        self.prev_end
    }

    // ---------------------------------------------------------------- errors

    fn found_text(&self, t: Token) -> String {
        if t.kind == TokenKind::Eof {
            return "end of file".to_string();
        }
        let text = self.text(t);
        // Keep messages short even for a 1 MB string literal.
        match text.char_indices().nth(40) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None => text.to_string(),
        }
    }

    fn error_span(&mut self, span: Span, message: String, expected: Option<String>, found: String) {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(RawError {
                span,
                message,
                expected,
                found,
            });
        }
    }

    /// "expected {what}, found '{token}'" at the current token.
    fn expected(&mut self, what: &str) -> Reported {
        let t = self.peek();
        let found = self.found_text(t);
        let message = if t.kind == TokenKind::Eof {
            format!("expected {what}, found end of file")
        } else {
            format!("expected {what}, found '{found}'")
        };
        self.error_span(t.span(), message, Some(what.to_string()), found);
        Reported
    }

    /// A free-form error at token `t`.
    fn error_at(&mut self, t: Token, message: String) -> Reported {
        let found = self.found_text(t);
        self.error_span(t.span(), message, None, found);
        Reported
    }

    fn expect(&mut self, kind: TokenKind, what: &str) -> PResult<Token> {
        match self.eat(kind) {
            Some(t) => Ok(t),
            None => Err(self.expected(what)),
        }
    }

    fn too_many_errors(&self) -> bool {
        self.errors.len() + self.lexer.errors.len() >= MAX_ERRORS
    }

    fn enter(&mut self) -> PResult<()> {
        if self.depth >= MAX_DEPTH {
            let t = self.peek();
            return Err(self.error_at(t, format!("nesting too deep (limit {MAX_DEPTH} levels)")));
        }
        self.depth += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Skips the rest of a failed statement: up to and including the next `;` at this
    /// nesting level, or up to (not including) the `}` that closes the current scope.
    fn recover_statement(&mut self) {
        let mut depth = 0u32;
        loop {
            match self.kind() {
                TokenKind::Eof => return,
                TokenKind::Semi if depth == 0 => {
                    self.bump();
                    return;
                }
                TokenKind::LBrace => depth += 1,
                TokenKind::RBrace => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                    if depth == 0 {
                        // A skipped nested `{ … }` is a whole statement.
                        self.bump();
                        return;
                    }
                }
                _ => {}
            }
            self.bump();
        }
    }

    /// Skips the rest of a failed module item: up to and including the next `;` outside
    /// braces, or past the `}` that balances the first `{` skipped.
    fn recover_item(&mut self) {
        let mut depth = 0u32;
        loop {
            match self.kind() {
                TokenKind::Eof => return,
                TokenKind::Semi if depth == 0 => {
                    self.bump();
                    return;
                }
                TokenKind::LBrace => depth += 1,
                TokenKind::RBrace => {
                    self.bump();
                    if depth <= 1 {
                        return;
                    }
                    depth -= 1;
                    continue;
                }
                _ => {}
            }
            self.bump();
        }
    }

    // ---------------------------------------------------------------- literals

    fn ident(&mut self, what: &str) -> PResult<Ident> {
        let t = self.expect(TokenKind::Ident, what)?;
        Ok(Ident {
            name: self.text(t).to_string(),
            span: t.span(),
        })
    }

    /// An unsigned decimal (or hex/octal/binary) integer that must fit in `u32`.
    fn u32_literal(&mut self, what: &str) -> PResult<u32> {
        let t = self.peek();
        let v = self.u64_literal(what)?;
        u32::try_from(v)
            .map_err(|_| self.error_at(t, format!("{what} {v} does not fit in 32 bits")))
    }

    fn u64_literal(&mut self, what: &str) -> PResult<u64> {
        let t = self.expect(TokenKind::Number, what)?;
        match parse_number(self.text(t)) {
            Ok(Immediate::Int(v)) => Ok(v as u64),
            Ok(_) => Err(self.error_at(
                t,
                format!("expected {what}, found a floating-point literal"),
            )),
            Err(msg) => Err(self.error_at(t, msg)),
        }
    }

    /// `[-] number`
    fn immediate(&mut self) -> PResult<(Immediate, Span)> {
        let minus = self.eat(TokenKind::Minus);
        let t = self.expect(TokenKind::Number, "a number")?;
        let value = match parse_number(self.text(t)) {
            Ok(v) => v,
            Err(msg) => return Err(self.error_at(t, msg)),
        };
        let span = minus.map_or(t.span(), |m| m.span().to(t.span()));
        Ok((
            if minus.is_some() {
                negate(value)
            } else {
                value
            },
            span,
        ))
    }

    /// `[-] integer` (a float is an error).
    fn signed_int(&mut self, what: &str) -> PResult<i64> {
        let start = self.peek();
        match self.immediate()? {
            (Immediate::Int(v), _) => Ok(v),
            _ => Err(self.error_at(
                start,
                format!("expected {what}, found a floating-point literal"),
            )),
        }
    }

    /// `+ int`, `- int` or `+ -int` after a symbol; 0 if neither sign follows.
    fn symbol_offset(&mut self) -> PResult<Option<i64>> {
        if self.eat(TokenKind::Plus).is_some() {
            Ok(Some(self.signed_int("an integer offset")?))
        } else if self.eat(TokenKind::Minus).is_some() {
            Ok(Some(self.signed_int("an integer offset")?.wrapping_neg()))
        } else {
            Ok(None)
        }
    }

    /// The contents of a string token, without the quotes.
    fn string(&mut self, what: &str) -> PResult<String> {
        let t = self.expect(TokenKind::String, what)?;
        let text = self.text(t);
        let inner = text.strip_prefix('"').unwrap_or(text);
        let inner = inner.strip_suffix('"').unwrap_or(inner);
        Ok(inner.to_string())
    }

    // ---------------------------------------------------------------- module

    pub(crate) fn module(&mut self) -> Module {
        let mut module = Module {
            version: None,
            target: Vec::new(),
            address_size: None,
            items: Vec::new(),
            span: Span::new(0, self.src.len() as u32),
        };
        while !self.at(TokenKind::Eof) && !self.too_many_errors() {
            let before = self.pos;
            if self.module_item(&mut module).is_err() {
                self.recover_item();
            }
            if self.pos == before {
                // Every iteration must make progress.
                self.bump();
            }
        }
        module
    }

    fn module_item(&mut self, module: &mut Module) -> PResult<()> {
        let t = self.peek();
        if t.kind != TokenKind::Dot {
            return Err(self.expected("a directive ('.version', '.entry', '.func', a variable, …)"));
        }
        match self.text(t) {
            ".version" => {
                self.bump();
                let v = self.expect(TokenKind::Number, "a version number 'major.minor'")?;
                let text = self.text(v);
                let parsed = text
                    .split_once('.')
                    .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
                let Some(version) = parsed else {
                    return Err(self.error_at(
                        v,
                        format!("invalid version '{text}': expected 'major.minor'"),
                    ));
                };
                if module.version.is_some() {
                    return Err(self.error_at(t, "duplicate '.version' directive".to_string()));
                }
                module.version = Some(version);
            }
            ".target" => {
                self.bump();
                if !module.target.is_empty() {
                    return Err(self.error_at(t, "duplicate '.target' directive".to_string()));
                }
                module
                    .target
                    .push(self.ident("a target name such as 'sm_70'")?);
                while self.eat(TokenKind::Comma).is_some() {
                    module
                        .target
                        .push(self.ident("a target name such as 'sm_70'")?);
                }
            }
            ".address_size" => {
                self.bump();
                let size = self.u32_literal("an address size")?;
                if module.address_size.is_some() {
                    return Err(self.error_at(t, "duplicate '.address_size' directive".to_string()));
                }
                module.address_size = Some(size);
            }
            ".file" => {
                let f = self.file_directive()?;
                module.items.push(ModuleItem::File(f));
            }
            ".section" => {
                let s = self.section()?;
                module.items.push(ModuleItem::Section(s));
            }
            ".pragma" => {
                let p = self.pragma()?;
                module.items.push(ModuleItem::Pragma(p));
            }
            _ => {
                let start = t.start;
                let linkage = self.linkage()?;
                if self.at_dot(".entry") || self.at_dot(".func") {
                    let f = self.function(linkage, start)?;
                    module.items.push(ModuleItem::Function(f));
                } else if self.at_state_space() {
                    let vars = self.variable_decl(linkage, start)?;
                    module
                        .items
                        .extend(vars.into_iter().map(ModuleItem::Variable));
                } else {
                    return Err(
                        self.expected("a module directive ('.entry', '.func', a state space, …)")
                    );
                }
            }
        }
        Ok(())
    }

    /// `.file 1 "path" [, timestamp, size]` (no semicolon).
    fn file_directive(&mut self) -> PResult<FileDirective> {
        let start = self.bump().start;
        let index = self.u32_literal("a file index")?;
        let path = self.string("a quoted file path")?;
        let mut timestamp_and_size = None;
        if self.eat(TokenKind::Comma).is_some() {
            let ts = self.u64_literal("a timestamp")?;
            self.expect(TokenKind::Comma, "',' before the file size")?;
            let size = self.u64_literal("a file size")?;
            timestamp_and_size = Some((ts, size));
        }
        Ok(FileDirective {
            index,
            path,
            timestamp_and_size,
            span: Span::new(start, self.prev_end()),
        })
    }

    /// `.section .name { raw }`
    fn section(&mut self) -> PResult<SectionDirective> {
        let start = self.bump().start;
        let name_tok = self.expect(TokenKind::Dot, "a section name such as '.debug_info'")?;
        let name = self.text(name_tok)[1..].to_string();
        let open = self.expect(TokenKind::LBrace, "'{' to open the section body")?;
        let mut depth = 1u32;
        loop {
            let t = self.bump();
            match t.kind {
                TokenKind::LBrace => depth += 1,
                TokenKind::RBrace => {
                    depth -= 1;
                    if depth == 0 {
                        let body = self
                            .src
                            .get(open.end as usize..t.start as usize)
                            .unwrap_or("")
                            .to_string();
                        return Ok(SectionDirective {
                            name,
                            body,
                            span: Span::new(start, t.end),
                        });
                    }
                }
                TokenKind::Eof => {
                    return Err(self.error_at(
                        open,
                        "unclosed section body: expected '}' before end of file".to_string(),
                    ));
                }
                _ => {}
            }
        }
    }

    /// `.pragma "text";`
    fn pragma(&mut self) -> PResult<Pragma> {
        let start = self.bump().start;
        let text = self.string("a quoted pragma string")?;
        let end = self.expect(TokenKind::Semi, "';' after the pragma")?.end;
        Ok(Pragma {
            text,
            span: Span::new(start, end),
        })
    }

    /// `.visible`, `.extern`, `.weak` or `.common`, at most one.
    fn linkage(&mut self) -> PResult<Option<Linkage>> {
        let mut linkage = None;
        loop {
            let t = self.peek();
            if t.kind != TokenKind::Dot {
                return Ok(linkage);
            }
            let l = match self.text(t) {
                ".visible" => Linkage::Visible,
                ".extern" => Linkage::Extern,
                ".weak" => Linkage::Weak,
                ".common" => Linkage::Common,
                _ => return Ok(linkage),
            };
            if linkage.is_some() {
                return Err(self.error_at(
                    t,
                    format!("more than one linkage directive: '{}'", self.text(t)),
                ));
            }
            linkage = Some(l);
            self.bump();
        }
    }

    fn at_state_space(&self) -> bool {
        let t = self.peek();
        t.kind == TokenKind::Dot && StateSpace::from_name(&self.text(t)[1..]).is_some()
    }

    fn state_space(&mut self, what: &str) -> PResult<StateSpace> {
        let t = self.peek();
        if t.kind == TokenKind::Dot {
            if let Some(s) = StateSpace::from_name(&self.text(t)[1..]) {
                self.bump();
                return Ok(s);
            }
        }
        Err(self.expected(what))
    }

    /// A `.type` token, if the current token is one.
    fn scalar_type(&self) -> Option<ScalarType> {
        let t = self.peek();
        if t.kind != TokenKind::Dot {
            return None;
        }
        ScalarType::from_name(&self.text(t)[1..])
    }

    fn vector_width(&self) -> Option<VectorWidth> {
        let t = self.peek();
        if t.kind != TokenKind::Dot {
            return None;
        }
        match self.text(t) {
            ".v2" => Some(VectorWidth::V2),
            ".v4" => Some(VectorWidth::V4),
            ".v8" => Some(VectorWidth::V8),
            _ => None,
        }
    }

    /// `.align N`
    fn align(&mut self) -> PResult<u32> {
        self.bump();
        let t = self.peek();
        let n = self.u32_literal("an alignment in bytes")?;
        if n == 0 || !n.is_power_of_two() {
            return Err(self.error_at(t, format!("alignment {n} is not a power of two")));
        }
        Ok(n)
    }

    /// `[N]` or `[]`, repeated.
    fn array_dims(&mut self) -> PResult<Vec<Option<u64>>> {
        let mut dims = Vec::new();
        while self.eat(TokenKind::LBracket).is_some() {
            if self.eat(TokenKind::RBracket).is_some() {
                dims.push(None);
                continue;
            }
            let n = self.u64_literal("an array size")?;
            self.expect(TokenKind::RBracket, "']' after the array size")?;
            dims.push(Some(n));
        }
        Ok(dims)
    }

    // ---------------------------------------------------------------- functions

    fn function(&mut self, linkage: Option<Linkage>, start: u32) -> PResult<Function> {
        let kind = if self.at_dot(".entry") {
            FunctionKind::Entry
        } else {
            FunctionKind::Func
        };
        self.bump();
        let return_params = if self.at(TokenKind::LParen) {
            self.param_list()?
        } else {
            Vec::new()
        };
        let name = self.ident("a function name")?;
        let params = if self.at(TokenKind::LParen) {
            self.param_list()?
        } else {
            Vec::new()
        };
        let mut noreturn = false;
        let mut directives = Vec::new();
        loop {
            let t = self.peek();
            if t.kind != TokenKind::Dot {
                break;
            }
            match self.text(t) {
                ".noreturn" => {
                    self.bump();
                    noreturn = true;
                }
                ".maxntid" => {
                    self.bump();
                    directives.push(PerformanceDirective::MaxNtid(self.dim_list()?));
                }
                ".reqntid" => {
                    self.bump();
                    directives.push(PerformanceDirective::ReqNtid(self.dim_list()?));
                }
                ".minnctapersm" => {
                    self.bump();
                    directives.push(PerformanceDirective::MinNctaPerSm(
                        self.u32_literal("a CTA count")?,
                    ));
                }
                ".maxnctapersm" => {
                    self.bump();
                    directives.push(PerformanceDirective::MaxNctaPerSm(
                        self.u32_literal("a CTA count")?,
                    ));
                }
                ".maxnreg" => {
                    self.bump();
                    directives.push(PerformanceDirective::MaxNreg(
                        self.u32_literal("a register count")?,
                    ));
                }
                ".reqnctapercluster" => {
                    self.bump();
                    directives.push(PerformanceDirective::ReqNctaPerCluster(self.dim_list()?));
                }
                ".explicitcluster" => {
                    self.bump();
                    directives.push(PerformanceDirective::ExplicitCluster);
                }
                ".maxclusterrank" => {
                    self.bump();
                    directives.push(PerformanceDirective::MaxClusterRank(
                        self.u32_literal("a CTA count")?,
                    ));
                }
                ".pragma" => directives.push(PerformanceDirective::Pragma(self.pragma()?)),
                _ => break,
            }
        }
        let body = if self.at(TokenKind::LBrace) {
            Some(self.block()?)
        } else if self.eat(TokenKind::Semi).is_some() {
            None
        } else {
            return Err(self.expected("'{' to start the function body or ';' after a declaration"));
        };
        Ok(Function {
            linkage,
            kind,
            return_params,
            name,
            params,
            noreturn,
            directives,
            body,
            span: Span::new(start, self.prev_end()),
        })
    }

    /// `N [, N [, N]]` for `.maxntid` and `.reqntid`.
    fn dim_list(&mut self) -> PResult<Vec<u32>> {
        let mut dims = vec![self.u32_literal("a thread count")?];
        while dims.len() < 3 && self.eat(TokenKind::Comma).is_some() {
            dims.push(self.u32_literal("a thread count")?);
        }
        Ok(dims)
    }

    /// `( [param {, param}] )`
    fn param_list(&mut self) -> PResult<Vec<Param>> {
        self.expect(TokenKind::LParen, "'('")?;
        let mut params = Vec::new();
        if self.eat(TokenKind::RParen).is_some() {
            return Ok(params);
        }
        loop {
            params.push(self.param()?);
            if self.eat(TokenKind::Comma).is_some() {
                continue;
            }
            self.expect(TokenKind::RParen, "',' or ')' after a parameter")?;
            return Ok(params);
        }
    }

    /// `.param [.align N] .type [.ptr [.space] [.align N]] name [dims]`
    fn param(&mut self) -> PResult<Param> {
        let start = self.peek().start;
        let space = self.state_space("a parameter state space such as '.param'")?;
        let mut align = None;
        let mut ty = None;
        let mut ptr = None;
        loop {
            if self.at_dot(".align") {
                align = Some(self.align()?);
            } else if let Some(t) = self.scalar_type() {
                if ty.is_some() {
                    return Err(self.expected("a parameter name"));
                }
                self.bump();
                ty = Some(t);
            } else if self.at_dot(".ptr") {
                self.bump();
                let mut attr = PtrAttribute {
                    space: None,
                    align: None,
                };
                if self.at_state_space() {
                    attr.space = Some(self.state_space("a state space")?);
                }
                if self.at_dot(".align") {
                    attr.align = Some(self.align()?);
                }
                ptr = Some(attr);
            } else {
                break;
            }
        }
        let Some(ty) = ty else {
            return Err(self.expected("a parameter type such as '.u64'"));
        };
        let name = self.ident("a parameter name")?;
        let array = self.array_dims()?;
        Ok(Param {
            space,
            align,
            ty,
            ptr,
            name,
            array,
            span: Span::new(start, self.prev_end()),
        })
    }

    // ---------------------------------------------------------------- variables

    /// `space [.attribute(.managed)] [.align N] [.vN] type name[dims] [= init] {, name…} ;`
    /// One declaration per declared name.
    fn variable_decl(
        &mut self,
        linkage: Option<Linkage>,
        start: u32,
    ) -> PResult<Vec<VariableDecl>> {
        let space = self.state_space("a state space")?;
        let mut managed = false;
        let mut align = None;
        let mut vector = None;
        let mut ty = None;
        loop {
            let t = self.peek();
            if t.kind != TokenKind::Dot {
                break;
            }
            let text = self.text(t);
            if text == ".align" {
                align = Some(self.align()?);
            } else if text == ".attribute" {
                self.bump();
                self.expect(TokenKind::LParen, "'(' after '.attribute'")?;
                let a = self.peek();
                if a.kind == TokenKind::Dot && self.text(a) == ".managed" {
                    self.bump();
                    managed = true;
                } else {
                    return Err(self.expected("'.managed' (the only supported variable attribute)"));
                }
                self.expect(TokenKind::RParen, "')' after the attribute")?;
            } else if let Some(v) = self.vector_width() {
                self.bump();
                vector = Some(v);
            } else {
                let vt = match text {
                    ".texref" => VariableType::TexRef,
                    ".samplerref" => VariableType::SamplerRef,
                    ".surfref" => VariableType::SurfRef,
                    _ => match ScalarType::from_name(&text[1..]) {
                        Some(s) => VariableType::Scalar(s),
                        None => break,
                    },
                };
                if ty.is_some() {
                    return Err(self.expected("a variable name"));
                }
                self.bump();
                ty = Some(vt);
            }
        }
        let Some(ty) = ty else {
            return Err(self.expected("a variable type such as '.b32'"));
        };
        let mut decls = Vec::new();
        loop {
            let name = self.ident("a variable name")?;
            let array = self.array_dims()?;
            let init = if self.eat(TokenKind::Eq).is_some() {
                Some(self.initializer()?)
            } else {
                None
            };
            decls.push(VariableDecl {
                linkage,
                space,
                managed,
                align,
                vector,
                ty,
                name,
                array,
                init,
                span: Span::new(start, self.prev_end()),
            });
            if self.eat(TokenKind::Comma).is_none() {
                break;
            }
        }
        let end = self
            .expect(TokenKind::Semi, "';' after the variable declaration")?
            .end;
        for d in &mut decls {
            d.span.end = end;
        }
        Ok(decls)
    }

    fn initializer(&mut self) -> PResult<Initializer> {
        if self.eat(TokenKind::LBrace).is_some() {
            self.enter()?;
            let result = self.initializer_list();
            self.leave();
            return result;
        }
        let t = self.peek();
        match t.kind {
            TokenKind::Number | TokenKind::Minus => {
                let (imm, _) = self.immediate()?;
                Ok(Initializer::Value(InitValue::Immediate(imm)))
            }
            TokenKind::Ident
                if self.text(t) == "generic" && self.next_kind() == TokenKind::LParen =>
            {
                self.bump();
                self.bump();
                let name = self.ident("a symbol name inside 'generic(…)'")?;
                self.expect(TokenKind::RParen, "')' after the symbol")?;
                let offset = self.symbol_offset()?.unwrap_or(0);
                Ok(Initializer::Value(InitValue::Generic { name, offset }))
            }
            TokenKind::Ident => {
                let name = self.ident("a symbol")?;
                let offset = self.symbol_offset()?.unwrap_or(0);
                Ok(Initializer::Value(InitValue::Symbol { name, offset }))
            }
            _ => Err(self.expected("an initializer value")),
        }
    }

    /// After `{`: `[init {, init}] }`
    fn initializer_list(&mut self) -> PResult<Initializer> {
        let mut items = Vec::new();
        if self.eat(TokenKind::RBrace).is_some() {
            return Ok(Initializer::List(items));
        }
        loop {
            items.push(self.initializer()?);
            if self.eat(TokenKind::Comma).is_some() {
                continue;
            }
            self.expect(TokenKind::RBrace, "',' or '}' in the initializer list")?;
            return Ok(Initializer::List(items));
        }
    }

    // ---------------------------------------------------------------- statements

    /// `{ statements }`
    fn block(&mut self) -> PResult<Block> {
        let open = self.expect(TokenKind::LBrace, "'{'")?;
        if self.enter().is_err() {
            self.skip_balanced_block();
            return Err(Reported);
        }
        let mut statements = Vec::new();
        let result = loop {
            match self.kind() {
                TokenKind::RBrace => {
                    let close = self.bump();
                    break Ok(Block {
                        statements,
                        span: open.span().to(close.span()),
                    });
                }
                TokenKind::Eof => {
                    // Report at the opening brace: that is where the fix goes.
                    break Err(self.error_at(
                        open,
                        "unclosed '{': expected '}' before end of file".to_string(),
                    ));
                }
                _ if self.too_many_errors() => break Err(Reported),
                _ => {
                    let before = self.pos;
                    match self.statement(&mut statements) {
                        Ok(()) => {}
                        Err(Reported) => self.recover_statement(),
                    }
                    if self.pos == before {
                        self.bump();
                    }
                }
            }
        };
        self.leave();
        result
    }

    /// After a `{` that would nest too deeply: skip to its matching `}` without recursing.
    fn skip_balanced_block(&mut self) {
        let mut depth = 1u32;
        loop {
            match self.bump().kind {
                TokenKind::LBrace => depth += 1,
                TokenKind::RBrace => {
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                TokenKind::Eof => return,
                _ => {}
            }
        }
    }

    fn statement(&mut self, out: &mut Vec<Statement>) -> PResult<()> {
        let t = self.peek();
        match t.kind {
            TokenKind::LBrace => out.push(Statement::Block(self.block()?)),
            TokenKind::At => out.push(Statement::Instruction(self.instruction()?)),
            TokenKind::Ident if self.next_kind() == TokenKind::Colon => {
                let label = self.ident("a label")?;
                self.bump();
                if self.at_dot(".callprototype") {
                    out.push(Statement::CallPrototype(self.call_prototype(label)?));
                } else if self.at_dot(".branchtargets") || self.at_dot(".calltargets") {
                    out.push(Statement::TargetList(self.target_list(label)?));
                } else {
                    out.push(Statement::Label(label));
                }
            }
            TokenKind::Ident => out.push(Statement::Instruction(self.instruction()?)),
            TokenKind::Dot => match self.text(t) {
                ".reg" => out.push(Statement::RegDecl(self.reg_decl()?)),
                ".pragma" => out.push(Statement::Pragma(self.pragma()?)),
                ".loc" => out.push(Statement::Loc(self.loc()?)),
                _ => {
                    let linkage = self.linkage()?;
                    if !self.at_state_space() {
                        return Err(
                            self.expected("a statement (instruction, label, declaration or '{')")
                        );
                    }
                    let vars = self.variable_decl(linkage, t.start)?;
                    out.extend(vars.into_iter().map(Statement::Variable));
                }
            },
            _ => return Err(self.expected("a statement (instruction, label, declaration or '{')")),
        }
        Ok(())
    }

    /// `.reg [.vN] .type name[<N>] {, name[<N>]} ;`
    fn reg_decl(&mut self) -> PResult<RegDecl> {
        let start = self.bump().start;
        let mut vector = None;
        let mut ty = None;
        loop {
            if let Some(v) = self.vector_width() {
                self.bump();
                vector = Some(v);
            } else if let Some(t) = self.scalar_type() {
                if ty.is_some() {
                    return Err(self.expected("a register name"));
                }
                self.bump();
                ty = Some(t);
            } else {
                break;
            }
        }
        let Some(ty) = ty else {
            return Err(self.expected("a register type such as '.b32'"));
        };
        let mut names = Vec::new();
        loop {
            let name = self.ident("a register name")?;
            let range = if self.eat(TokenKind::Lt).is_some() {
                let t = self.peek();
                if t.kind != TokenKind::Number {
                    return Err(self.expected("a register count inside '<…>'"));
                }
                let n = self.u32_literal("a register count")?;
                self.expect(TokenKind::Gt, "'>' after the register count")?;
                Some(n)
            } else {
                None
            };
            names.push(RegDeclarator { name, range });
            if self.eat(TokenKind::Comma).is_none() {
                break;
            }
        }
        let end = self
            .expect(TokenKind::Semi, "',' or ';' after a register name")?
            .end;
        Ok(RegDecl {
            vector,
            ty,
            names,
            span: Span::new(start, end),
        })
    }

    /// `.loc file line column [rest of line]` (no semicolon).
    fn loc(&mut self) -> PResult<LocDirective> {
        let start = self.bump().start;
        let file = self.u32_literal("a file index")?;
        let line = self.u32_literal("a line number")?;
        let column = self.u32_literal("a column number")?;
        let mut rest = None;
        let mut end = self.prev_end();
        if !self.peek().newline_before && !matches!(self.kind(), TokenKind::Eof | TokenKind::RBrace)
        {
            let first = self.peek().start;
            while !self.peek().newline_before
                && !matches!(self.kind(), TokenKind::Eof | TokenKind::RBrace)
            {
                end = self.bump().end;
            }
            rest = self
                .src
                .get(first as usize..end as usize)
                .map(str::to_string);
        }
        Ok(LocDirective {
            file,
            line,
            column,
            rest,
            span: Span::new(start, end),
        })
    }

    /// After `label:`: `.callprototype [(rets)] _ (params) [.noreturn];`
    fn call_prototype(&mut self, label: Ident) -> PResult<CallPrototype> {
        self.bump();
        let return_params = if self.at(TokenKind::LParen) {
            self.param_list()?
        } else {
            Vec::new()
        };
        let underscore = self.peek();
        if underscore.kind != TokenKind::Ident || self.text(underscore) != "_" {
            return Err(self.expected("'_' in place of the function name"));
        }
        self.bump();
        let params = if self.at(TokenKind::LParen) {
            self.param_list()?
        } else {
            Vec::new()
        };
        let mut noreturn = false;
        if self.at_dot(".noreturn") {
            self.bump();
            noreturn = true;
        }
        let end = self
            .expect(TokenKind::Semi, "';' after the call prototype")?
            .end;
        Ok(CallPrototype {
            span: Span::new(label.span.start, end),
            label,
            return_params,
            params,
            noreturn,
        })
    }

    /// After `label:`: `.branchtargets a, b;` or `.calltargets f, g;`
    fn target_list(&mut self, label: Ident) -> PResult<TargetList> {
        let kind = if self.at_dot(".branchtargets") {
            TargetListKind::Branch
        } else {
            TargetListKind::Call
        };
        self.bump();
        let mut targets = vec![self.ident("a target name")?];
        while self.eat(TokenKind::Comma).is_some() {
            targets.push(self.ident("a target name")?);
        }
        let end = self
            .expect(TokenKind::Semi, "',' or ';' after a target")?
            .end;
        Ok(TargetList {
            span: Span::new(label.span.start, end),
            label,
            kind,
            targets,
        })
    }

    // ---------------------------------------------------------------- instructions

    /// `[@[!]%p] opcode{.modifier} [operand {, operand}] ;`
    fn instruction(&mut self) -> PResult<Instruction> {
        let start = self.peek().start;
        let guard = if self.eat(TokenKind::At).is_some() {
            let negated = self.eat(TokenKind::Bang).is_some();
            let predicate = self.ident("a predicate register after '@'")?;
            Some(Guard { negated, predicate })
        } else {
            None
        };
        let op_tok = self.peek();
        if op_tok.kind != TokenKind::Ident {
            return Err(self.expected("an opcode"));
        }
        let Some(opcode) = Opcode::from_name(self.text(op_tok)) else {
            let message = format!("unknown opcode '{}'", self.found_text(op_tok));
            let found = self.found_text(op_tok);
            self.error_span(op_tok.span(), message, Some("an opcode".to_string()), found);
            return Err(Reported);
        };
        self.bump();
        let mut modifiers = Vec::new();
        while self.at(TokenKind::Dot) {
            let t = self.bump();
            modifiers.push(Modifier::from_name(&self.text(t)[1..]));
        }
        let mut operands = Vec::new();
        if !self.at(TokenKind::Semi) {
            loop {
                operands.push(self.operand()?);
                if self.eat(TokenKind::Comma).is_some() {
                    continue;
                }
                if self.at(TokenKind::Semi) {
                    break;
                }
                return Err(self.expected("',' or ';' after operand"));
            }
        }
        let end = self.bump().end;
        Ok(Instruction {
            guard,
            opcode,
            modifiers,
            operands,
            span: Span::new(start, end),
        })
    }

    fn operand(&mut self) -> PResult<Operand> {
        self.enter()?;
        let result = self.operand_inner();
        self.leave();
        result
    }

    fn operand_inner(&mut self) -> PResult<Operand> {
        let t = self.peek();
        match t.kind {
            TokenKind::Bang => {
                self.bump();
                Ok(Operand::Not(Box::new(self.operand()?)))
            }
            TokenKind::LBrace => {
                self.bump();
                let items =
                    self.operand_sequence(TokenKind::RBrace, "',' or '}' in the vector operand")?;
                if items.is_empty() {
                    return Err(self.error_at(t, "empty vector operand '{}'".to_string()));
                }
                Ok(Operand::Vector(items, Span::new(t.start, self.prev_end())))
            }
            TokenKind::LParen => {
                self.bump();
                let items =
                    self.operand_sequence(TokenKind::RParen, "',' or ')' in the operand list")?;
                Ok(Operand::List(items, Span::new(t.start, self.prev_end())))
            }
            TokenKind::LBracket => self.address(),
            TokenKind::Number | TokenKind::Minus => {
                let (imm, span) = self.immediate()?;
                Ok(Operand::Immediate(imm, span))
            }
            TokenKind::Ident => {
                let name = self.ident("an operand")?;
                if name.name == "_" && !self.at(TokenKind::Pipe) {
                    return Ok(Operand::Sink(name.span));
                }
                if self.at(TokenKind::Dot) {
                    let c = self.peek();
                    let component = match self.text(c) {
                        ".x" | ".r" => VectorComponent::X,
                        ".y" | ".g" => VectorComponent::Y,
                        ".z" | ".b" => VectorComponent::Z,
                        ".w" | ".a" => VectorComponent::W,
                        _ => {
                            return Err(
                                self.expected("a vector component ('.x', '.y', '.z' or '.w')")
                            )
                        }
                    };
                    self.bump();
                    return Ok(Operand::Name {
                        name,
                        component: Some(component),
                    });
                }
                if self.eat(TokenKind::Pipe).is_some() {
                    let second = self.ident("a predicate register after '|'")?;
                    return Ok(Operand::PredicatePair(name, second));
                }
                if let Some(offset) = self.symbol_offset()? {
                    return Ok(Operand::SymbolOffset { name, offset });
                }
                Ok(Operand::Name {
                    name,
                    component: None,
                })
            }
            _ => Err(self.expected("an operand")),
        }
    }

    /// `[item {, item}] close`, after the opening token.
    fn operand_sequence(&mut self, close: TokenKind, what: &str) -> PResult<Vec<Operand>> {
        let mut items = Vec::new();
        if self.eat(close).is_some() {
            return Ok(items);
        }
        loop {
            items.push(self.operand()?);
            if self.eat(TokenKind::Comma).is_some() {
                continue;
            }
            self.expect(close, what)?;
            return Ok(items);
        }
    }

    /// `[base]`, `[base+off]`, `[base+-off]`, `[base-off]`, `[imm]`, `[tex, {…}]`
    fn address(&mut self) -> PResult<Operand> {
        let open = self.bump();
        let t = self.peek();
        match t.kind {
            TokenKind::Number | TokenKind::Minus => {
                let offset = self.signed_int("an absolute address")?;
                let close = self.expect(TokenKind::RBracket, "']' after the address")?;
                Ok(Operand::Address(Address {
                    base: AddressBase::Absolute,
                    offset,
                    span: open.span().to(close.span()),
                }))
            }
            TokenKind::Ident => {
                let base = self.ident("an address base")?;
                if self.at(TokenKind::Comma) {
                    let first = Operand::Name {
                        name: base,
                        component: None,
                    };
                    self.bump();
                    // `[tex, ]` would print as the plain address `[tex]`: a comma must be
                    // followed by the coordinates (or sampler).
                    if self.at(TokenKind::RBracket) {
                        return Err(self.expected("an operand after ',' in the texture operand"));
                    }
                    let mut items = vec![first];
                    items.extend(self.operand_sequence(
                        TokenKind::RBracket,
                        "',' or ']' in the texture operand",
                    )?);
                    return Ok(Operand::TextureAddress(
                        items,
                        Span::new(open.start, self.prev_end()),
                    ));
                }
                let offset = self.symbol_offset()?.unwrap_or(0);
                let close = self.expect(TokenKind::RBracket, "'+', '-' or ']' in the address")?;
                Ok(Operand::Address(Address {
                    base: AddressBase::Name(base),
                    offset,
                    span: open.span().to(close.span()),
                }))
            }
            _ => Err(self.expected("a register, symbol or integer address")),
        }
    }
}

fn negate(value: Immediate) -> Immediate {
    match value {
        Immediate::Int(v) => Immediate::Int(v.wrapping_neg()),
        Immediate::F32(bits) => Immediate::F32(bits ^ 0x8000_0000),
        Immediate::F64(bits) => Immediate::F64(bits ^ (1 << 63)),
    }
}

/// Interprets the text of a number token (without sign).
pub(crate) fn parse_number(text: &str) -> Result<Immediate, String> {
    let bytes = text.as_bytes();
    let invalid = || format!("invalid number literal '{text}'");
    if bytes.len() >= 2 && bytes[0] == b'0' {
        let digits = &text[2..];
        match bytes[1] {
            b'f' | b'F' => {
                if digits.len() != 8 {
                    return Err(format!(
                        "'{text}': a 0f float literal takes exactly 8 hex digits"
                    ));
                }
                return u32::from_str_radix(digits, 16)
                    .map(Immediate::F32)
                    .map_err(|_| invalid());
            }
            b'd' | b'D' => {
                if digits.len() != 16 {
                    return Err(format!(
                        "'{text}': a 0d double literal takes exactly 16 hex digits"
                    ));
                }
                return u64::from_str_radix(digits, 16)
                    .map(Immediate::F64)
                    .map_err(|_| invalid());
            }
            b'x' | b'X' => return int_radix(text, strip_u(digits), 16),
            b'b' | b'B' => return int_radix(text, strip_u(digits), 2),
            _ => {}
        }
    }
    if bytes.iter().any(|&b| b == b'.' || b == b'e' || b == b'E') {
        return match text.parse::<f64>() {
            Ok(v)
                if bytes
                    .iter()
                    .all(|b| b.is_ascii_digit() || b".eE+-".contains(b)) =>
            {
                Ok(Immediate::F64(v.to_bits()))
            }
            _ => Err(invalid()),
        };
    }
    let digits = strip_u(text);
    if digits.len() > 1 && digits.starts_with('0') {
        return int_radix(text, &digits[1..], 8);
    }
    int_radix(text, digits, 10)
}

fn strip_u(digits: &str) -> &str {
    digits.strip_suffix('U').unwrap_or(digits)
}

fn int_radix(text: &str, digits: &str, radix: u32) -> Result<Immediate, String> {
    if digits.is_empty() || !digits.bytes().all(|b| (b as char).is_digit(radix)) {
        return Err(format!("invalid number literal '{text}'"));
    }
    match u64::from_str_radix(digits, radix) {
        // Two's complement in 64 bits: 0xFFFFFFFFFFFFFFFF is -1.
        Ok(v) => Ok(Immediate::Int(v as i64)),
        Err(_) => Err(format!("integer literal '{text}' does not fit in 64 bits")),
    }
}
