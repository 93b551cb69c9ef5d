//! The parser of `lang.rs`: tokens to a tree, by recursive descent over
//! statements and precedence climbing over expressions.

/// Writes out `parse` and its `Parser`, with the attributes given on each
/// function and `impl`.
macro_rules! parser {
    ($(#[$batch:meta])*) => {
        /// Parses a chunk: a block that runs to the end of the tokens.
        $(#[$batch])*
        pub fn parse(tokens: &[Token]) -> Result<Block, ParseError> {
            let mut parser = Parser {
                tokens,
                pos: 0,
                depth: 0,
            };
            let chunk = parser.block()?;
            match parser.peek() {
                Tok::Eof => Ok(chunk),
                _ => Err(parser.error("expected a statement")),
            }
        }

        struct Parser<'t> {
            tokens: &'t [Token],
            pos: usize,
            /// Blocks and expressions open around `pos`.
            depth: u32,
        }

        $(#[$batch])*
        impl<'t> Parser<'t> {
            /// Statements up to the end of the input or a keyword that
            /// ends a block (`end`, `else`, `elseif`), or up to and with a
            /// `return`.
            fn block(&mut self) -> Result<Block, ParseError> {
                self.enter()?;
                let mut stmts = Vec::new();
                loop {
                    match self.peek() {
                        Tok::Sym(Sym::Semi) => self.bump(),
                        Tok::Kw(Kw::Return) => {
                            self.bump();
                            let values = match self.block_ends() || self.at_sym(Sym::Semi) {
                                true => Vec::new(),
                                false => self.exprs()?,
                            };
                            self.eat_sym(Sym::Semi);
                            stmts.push(Stmt::Return(values));
                            if !self.block_ends() {
                                let message = "expected the end of the block after `return`";
                                return Err(self.error(message));
                            }
                            break;
                        }
                        _ if self.block_ends() => break,
                        _ => stmts.push(self.statement()?),
                    }
                }
                self.depth -= 1;
                Ok(stmts)
            }

            fn block_ends(&self) -> bool {
                matches!(self.peek(), Tok::Eof | Tok::Kw(Kw::End | Kw::Else | Kw::Elseif))
            }

            fn statement(&mut self) -> Result<Stmt, ParseError> {
                let opener = self.token();
                match self.peek() {
                    Tok::Kw(Kw::Local) => {
                        self.bump();
                        let function = self.token();
                        if self.eat_kw(Kw::Function) {
                            let name = self.name()?;
                            let func = self.body(function)?;
                            return Ok(Stmt::LocalFunction { name, func });
                        }
                        let mut names = vec![self.name()?];
                        while self.eat_sym(Sym::Comma) {
                            names.push(self.name()?);
                        }
                        let values = match self.eat_sym(Sym::Assign) {
                            true => self.exprs()?,
                            false => Vec::new(),
                        };
                        Ok(Stmt::Local { names, values })
                    }
                    Tok::Kw(Kw::Function) => {
                        self.bump();
                        let mut path = vec![self.name()?];
                        while self.eat_sym(Sym::Dot) {
                            path.push(self.name()?);
                        }
                        let method = match self.eat_sym(Sym::Colon) {
                            true => Some(self.name()?),
                            false => None,
                        };
                        let func = self.body(opener)?;
                        Ok(Stmt::Function { path, method, func })
                    }
                    Tok::Kw(Kw::If) => {
                        self.bump();
                        let mut arms = Vec::new();
                        loop {
                            let cond = self.expr()?;
                            self.expect_kw(Kw::Then)?;
                            arms.push((cond, self.block()?));
                            if !self.eat_kw(Kw::Elseif) {
                                break;
                            }
                        }
                        let otherwise = match self.eat_kw(Kw::Else) {
                            true => Some(self.block()?),
                            false => None,
                        };
                        self.close(opener)?;
                        Ok(Stmt::If { arms, otherwise })
                    }
                    Tok::Kw(Kw::While) => {
                        self.bump();
                        let cond = Box::new(self.expr()?);
                        let body = self.loop_body(opener)?;
                        Ok(Stmt::While { cond, body })
                    }
                    Tok::Kw(Kw::For) => {
                        self.bump();
                        let var = self.name()?;
                        if self.eat_sym(Sym::Assign) {
                            let start = self.expr()?;
                            self.expect_sym(Sym::Comma)?;
                            let end = self.expr()?;
                            let step = match self.eat_sym(Sym::Comma) {
                                true => Some(self.expr()?),
                                false => None,
                            };
                            let body = self.loop_body(opener)?;
                            return Ok(Stmt::NumericFor(Box::new(NumericFor {
                                var,
                                start,
                                end,
                                step,
                                body,
                            })));
                        }
                        let mut names = vec![var];
                        while self.eat_sym(Sym::Comma) {
                            names.push(self.name()?);
                        }
                        if !self.eat_kw(Kw::In) {
                            return Err(self.error("expected `=` or `in`"));
                        }
                        let exprs = self.exprs()?;
                        let body = self.loop_body(opener)?;
                        Ok(Stmt::GenericFor { names, exprs, body })
                    }
                    Tok::Kw(Kw::Do) => {
                        self.bump();
                        let body = self.block()?;
                        self.close(opener)?;
                        Ok(Stmt::Do(body))
                    }
                    Tok::Kw(Kw::Break) => {
                        self.bump();
                        Ok(Stmt::Break)
                    }
                    _ => self.expr_statement(),
                }
            }

            /// `do block end`, closing the loop that `opener` opened.
            fn loop_body(&mut self, opener: &Token) -> Result<Block, ParseError> {
                self.expect_kw(Kw::Do)?;
                let body = self.block()?;
                self.close(opener)?;
                Ok(body)
            }

            /// An assignment or a call.
            fn expr_statement(&mut self) -> Result<Stmt, ParseError> {
                let first = self.target()?;
                if !self.at_sym(Sym::Assign) && !self.at_sym(Sym::Comma) {
                    return match first {
                        Expr::Call(..) | Expr::Method(..) => Ok(Stmt::Call(first)),
                        _ => Err(self.error("expected `=` or a call")),
                    };
                }
                let mut targets = vec![first];
                while self.eat_sym(Sym::Comma) {
                    targets.push(self.target()?);
                }
                self.expect_sym(Sym::Assign)?;
                let values = self.exprs()?;
                Ok(Stmt::Assign { targets, values })
            }

            /// A suffixed expression that, if more follows, must be
            /// something one can assign to.
            fn target(&mut self) -> Result<Expr, ParseError> {
                let start = self.token();
                let expr = self.suffixed()?;
                let assignable = matches!(expr, Expr::Name(_) | Expr::Field(..) | Expr::Index(..));
                if !assignable && (self.at_sym(Sym::Assign) || self.at_sym(Sym::Comma)) {
                    return Err(error_at(start, "cannot assign to this expression"));
                }
                Ok(expr)
            }

            /// `(params) block end`, closing what `opener` opened.
            fn body(&mut self, opener: &Token) -> Result<Box<Function>, ParseError> {
                self.expect_sym(Sym::LParen)?;
                let mut params = Vec::new();
                if !self.eat_sym(Sym::RParen) {
                    loop {
                        params.push(self.name()?);
                        if !self.eat_sym(Sym::Comma) {
                            break;
                        }
                    }
                    self.expect_sym(Sym::RParen)?;
                }
                let body = self.block()?;
                self.close(opener)?;
                Ok(Box::new(Function { params, body }))
            }

            fn exprs(&mut self) -> Result<Vec<Expr>, ParseError> {
                let mut exprs = vec![self.expr()?];
                while self.eat_sym(Sym::Comma) {
                    exprs.push(self.expr()?);
                }
                Ok(exprs)
            }

            fn expr(&mut self) -> Result<Expr, ParseError> {
                self.subexpr(0)
            }

            /// Precedence climbing: an operand (a unary operator and its
            /// operand, or a simple expression), then every binary
            /// operator whose left binding power is above `limit`, with
            /// its right-hand side, folded to the left.
            fn subexpr(&mut self, limit: u8) -> Result<Expr, ParseError> {
                self.enter()?;
                let mut lhs = match UnOp::from_tok(self.peek()) {
                    Some(op) => {
                        self.bump();
                        let operand = self.subexpr(UNARY_PRIORITY)?;
                        Expr::Unary(op, Box::new(operand))
                    }
                    None => self.simple()?,
                };
                let binary = |tok| BinOp::from_tok(tok).filter(|op| op.priority().0 > limit);
                while let Some(op) = binary(self.peek()) {
                    self.bump();
                    let rhs = self.subexpr(op.priority().1)?;
                    lhs = Expr::Binary(op, Box::new(lhs), Box::new(rhs));
                }
                self.depth -= 1;
                Ok(lhs)
            }

            fn simple(&mut self) -> Result<Expr, ParseError> {
                let token = self.token();
                let expr = match &token.kind {
                    Tok::Int(n) => Expr::Int(*n),
                    Tok::Float(x) => Expr::Float(*x),
                    Tok::Str(s) => Expr::Str(s.to_string()),
                    Tok::Kw(Kw::Nil) => Expr::Nil,
                    Tok::Kw(Kw::True) => Expr::True,
                    Tok::Kw(Kw::False) => Expr::False,
                    Tok::Kw(Kw::Function) => {
                        self.bump();
                        return Ok(Expr::Function(self.body(token)?));
                    }
                    Tok::Sym(Sym::LBrace) => return self.table(),
                    _ => return self.suffixed(),
                };
                self.bump();
                Ok(expr)
            }

            /// A name or a parenthesized expression, then any number of
            /// field accesses, indexes, calls and method calls.
            fn suffixed(&mut self) -> Result<Expr, ParseError> {
                let mut expr = match self.peek() {
                    Tok::Name(_) => Expr::Name(self.name()?),
                    Tok::Sym(Sym::LParen) => {
                        let opener = self.token();
                        self.bump();
                        let inner = self.expr()?;
                        self.close_sym(Sym::RParen, opener)?;
                        inner
                    }
                    _ => return Err(self.error("expected an expression")),
                };
                loop {
                    match self.peek() {
                        Tok::Sym(Sym::Dot) => {
                            self.bump();
                            let name = self.name()?;
                            expr = Expr::Field(Box::new(expr), name);
                        }
                        Tok::Sym(Sym::LBracket) => {
                            let opener = self.token();
                            self.bump();
                            let key = self.expr()?;
                            self.close_sym(Sym::RBracket, opener)?;
                            expr = Expr::Index(Box::new(expr), Box::new(key));
                        }
                        Tok::Sym(Sym::Colon) => {
                            self.bump();
                            let name = self.name()?;
                            let args = self.args()?;
                            expr = Expr::Method(Box::new(expr), name, args);
                        }
                        Tok::Sym(Sym::LParen) => {
                            let args = self.args()?;
                            expr = Expr::Call(Box::new(expr), args);
                        }
                        _ => return Ok(expr),
                    }
                }
            }

            fn args(&mut self) -> Result<Vec<Box<Expr>>, ParseError> {
                let opener = self.token();
                self.expect_sym(Sym::LParen)?;
                let mut args = Vec::new();
                if !self.eat_sym(Sym::RParen) {
                    loop {
                        args.push(Box::new(self.expr()?));
                        if !self.eat_sym(Sym::Comma) {
                            break;
                        }
                    }
                    self.close_sym(Sym::RParen, opener)?;
                }
                Ok(args)
            }

            fn table(&mut self) -> Result<Expr, ParseError> {
                let opener = self.token();
                self.bump();
                let mut fields = Vec::new();
                while !self.at_sym(Sym::RBrace) {
                    let field = match self.peek() {
                        Tok::Sym(Sym::LBracket) => {
                            let bracket = self.token();
                            self.bump();
                            let key = self.expr()?;
                            self.close_sym(Sym::RBracket, bracket)?;
                            self.expect_sym(Sym::Assign)?;
                            Field::Keyed(Box::new(key), self.expr()?)
                        }
                        Tok::Name(_) if self.peek_at(1) == &Tok::Sym(Sym::Assign) => {
                            let name = self.name()?;
                            self.bump();
                            Field::Named(name, self.expr()?)
                        }
                        _ => Field::Pos(self.expr()?),
                    };
                    fields.push(field);
                    if !self.eat_sym(Sym::Comma) && !self.eat_sym(Sym::Semi) {
                        break;
                    }
                }
                self.close_sym(Sym::RBrace, opener)?;
                Ok(Expr::Table(fields))
            }

            /// A name, copied into the tree.
            fn name(&mut self) -> Result<String, ParseError> {
                match self.peek() {
                    Tok::Name(name) => {
                        let name = name.to_string();
                        self.bump();
                        Ok(name)
                    }
                    _ => Err(self.error("expected a name")),
                }
            }

            fn token(&self) -> &'t Token {
                self.tokens.get(self.pos).unwrap_or(&EOF)
            }

            fn peek(&self) -> &'t Tok {
                &self.token().kind
            }

            fn peek_at(&self, ahead: usize) -> &'t Tok {
                self.tokens.get(self.pos + ahead).map_or(&Tok::Eof, |t| &t.kind)
            }

            fn bump(&mut self) {
                self.pos = (self.pos + 1).min(self.tokens.len());
            }

            fn at_sym(&self, sym: Sym) -> bool {
                self.peek() == &Tok::Sym(sym)
            }

            fn eat_sym(&mut self, sym: Sym) -> bool {
                let at = self.at_sym(sym);
                if at {
                    self.bump();
                }
                at
            }

            fn eat_kw(&mut self, kw: Kw) -> bool {
                let at = self.peek() == &Tok::Kw(kw);
                if at {
                    self.bump();
                }
                at
            }

            fn expect_sym(&mut self, sym: Sym) -> Result<(), ParseError> {
                match self.eat_sym(sym) {
                    true => Ok(()),
                    false => Err(self.error(&format!("expected `{}`", sym.text()))),
                }
            }

            fn expect_kw(&mut self, kw: Kw) -> Result<(), ParseError> {
                match self.eat_kw(kw) {
                    true => Ok(()),
                    false => Err(self.error(&format!("expected `{}`", kw.text()))),
                }
            }

            /// The `end` of what `opener` opened.
            fn close(&mut self, opener: &Token) -> Result<(), ParseError> {
                match self.eat_kw(Kw::End) {
                    true => Ok(()),
                    false => Err(self.unclosed("end", opener)),
                }
            }

            /// The bracket `sym` that closes `opener`.
            fn close_sym(&mut self, sym: Sym, opener: &Token) -> Result<(), ParseError> {
                match self.eat_sym(sym) {
                    true => Ok(()),
                    false => Err(self.unclosed(sym.text(), opener)),
                }
            }

            fn unclosed(&self, closer: &str, opener: &Token) -> ParseError {
                self.error(&format!(
                    "expected `{closer}` to close {} at line {}",
                    opener.kind, opener.line
                ))
            }

            /// One more level of nesting, within [`MAX_DEPTH`].
            fn enter(&mut self) -> Result<(), ParseError> {
                if self.depth == MAX_DEPTH {
                    return Err(self.error("nested too deeply"));
                }
                self.depth += 1;
                Ok(())
            }

            /// `message`, at the current token, which it names.
            fn error(&self, message: &str) -> ParseError {
                let token = self.token();
                error_at(token, &format!("{message}, found {}", token.kind))
            }
        }

        fn error_at(token: &Token, message: &str) -> ParseError {
            ParseError {
                line: token.line,
                column: token.column,
                message: message.to_string(),
            }
        }
    };
}
