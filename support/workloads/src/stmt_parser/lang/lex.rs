//! The lexer of `lang.rs`: source text to a `Vec<Token>`, each name and
//! string literal copied into a `Box<str>` of its own.

/// Writes out `lex` and its `Lexer`, with the attributes given on each
/// function and `impl`.
macro_rules! lexer {
    ($(#[$batch:meta])*) => {
        /// Splits `source` into tokens, the last one [`Tok::Eof`].
        $(#[$batch])*
        pub fn lex(source: &str) -> Result<Vec<Token>, ParseError> {
            let mut lexer = Lexer {
                src: source,
                bytes: source.as_bytes(),
                pos: 0,
                line: 1,
                line_start: 0,
            };
            let mut tokens = Vec::new();
            loop {
                let token = lexer.token()?;
                let end = token.kind == Tok::Eof;
                tokens.push(token);
                if end {
                    return Ok(tokens);
                }
            }
        }

        struct Lexer<'a> {
            src: &'a str,
            bytes: &'a [u8],
            /// Always on a character boundary of `src`.
            pos: usize,
            /// Line number of `pos`, and where that line starts.
            line: u32,
            line_start: usize,
        }

        $(#[$batch])*
        impl Lexer<'_> {
            fn token(&mut self) -> Result<Token, ParseError> {
                self.skip_space();
                let (line, column) = (self.line, self.column());
                let Some(&byte) = self.bytes.get(self.pos) else {
                    return Ok(Token { kind: Tok::Eof, line, column });
                };
                let kind = match byte {
                    b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                        let start = self.pos;
                        while self.peek().is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_') {
                            self.pos += 1;
                        }
                        let word = &self.src[start..self.pos];
                        match Kw::from_word(word) {
                            Some(kw) => Tok::Kw(kw),
                            None => Tok::Name(Box::from(word)),
                        }
                    }
                    b'0'..=b'9' => self.number()?,
                    b'"' | b'\'' => self.string(byte)?,
                    _ => Tok::Sym(self.symbol()?),
                };
                Ok(Token { kind, line, column })
            }

            fn skip_space(&mut self) {
                while let Some(byte) = self.peek() {
                    match byte {
                        b'\n' => {
                            self.pos += 1;
                            self.line += 1;
                            self.line_start = self.pos;
                        }
                        b' ' | b'\t' | b'\r' => self.pos += 1,
                        b'-' if self.bytes.get(self.pos + 1) == Some(&b'-') => {
                            while self.peek().is_some_and(|b| b != b'\n') {
                                self.pos += 1;
                            }
                        }
                        _ => return,
                    }
                }
            }

            /// A decimal or `0x` integer, or a decimal float.
            fn number(&mut self) -> Result<Tok, ParseError> {
                let start = self.pos;
                let rest = &self.src[start..];
                let hex = rest.starts_with("0x") || rest.starts_with("0X");
                let token = if hex {
                    self.pos += 2;
                    let mut n: i64 = 0;
                    while let Some(digit) = self.peek().and_then(|b| (b as char).to_digit(16)) {
                        n = n
                            .checked_mul(16)
                            .and_then(|n| n.checked_add(digit as i64))
                            .ok_or_else(|| self.error_at(start, "number too large"))?;
                        self.pos += 1;
                    }
                    if self.pos == start + 2 {
                        return Err(self.error_at(start, "malformed number"));
                    }
                    Tok::Int(n)
                } else {
                    self.digits();
                    let mut float = false;
                    if self.peek() == Some(b'.') && self.peek_digit(1) {
                        self.pos += 1;
                        self.digits();
                        float = true;
                    }
                    if matches!(self.peek(), Some(b'e' | b'E')) {
                        let sign = matches!(self.bytes.get(self.pos + 1), Some(b'+' | b'-'));
                        if !self.peek_digit(1 + sign as usize) {
                            return Err(self.error_at(start, "malformed number"));
                        }
                        self.pos += 1 + sign as usize;
                        self.digits();
                        float = true;
                    }
                    let text = &self.src[start..self.pos];
                    match float {
                        true => Tok::Float(
                            text.parse().map_err(|_| self.error_at(start, "malformed number"))?,
                        ),
                        false => Tok::Int(
                            text.parse().map_err(|_| self.error_at(start, "number too large"))?,
                        ),
                    }
                };
                let next = self.peek().unwrap_or(b' ');
                if next.is_ascii_alphanumeric() || next == b'_' || next == b'.' {
                    return Err(self.error_at(start, "malformed number"));
                }
                Ok(token)
            }

            fn digits(&mut self) {
                while self.peek().is_some_and(|b| b.is_ascii_digit()) {
                    self.pos += 1;
                }
            }

            fn peek_digit(&self, ahead: usize) -> bool {
                self.bytes.get(self.pos + ahead).is_some_and(u8::is_ascii_digit)
            }

            /// A literal quoted with `quote`: its text as it stands, or,
            /// where it has escapes, decoded into a new string.
            fn string(&mut self, quote: u8) -> Result<Tok, ParseError> {
                let start = self.pos;
                self.pos += 1;
                let mut run = self.pos;
                let mut decoded: Option<String> = None;
                loop {
                    match self.peek() {
                        None | Some(b'\n' | b'\r') => {
                            return Err(self.error_at(start, "unfinished string"));
                        }
                        Some(b'\\') => {
                            let text = decoded.get_or_insert_with(String::new);
                            text.push_str(&self.src[run..self.pos]);
                            self.pos += 1;
                            text.push(self.escape()?);
                            run = self.pos;
                        }
                        Some(b) if b == quote => break,
                        Some(_) => self.pos += 1,
                    }
                }
                let rest = &self.src[run..self.pos];
                self.pos += 1;
                Ok(Tok::Str(match decoded {
                    None => Box::from(rest),
                    Some(mut text) => {
                        text.push_str(rest);
                        text.into_boxed_str()
                    }
                }))
            }

            /// The character an escape stands for; `pos` is just past the
            /// backslash.
            fn escape(&mut self) -> Result<char, ParseError> {
                let at = self.pos - 1;
                let Some(byte) = self.peek() else {
                    return Err(self.error_at(at, "unfinished string"));
                };
                self.pos += 1;
                Ok(match byte {
                    b'n' => '\n',
                    b't' => '\t',
                    b'r' => '\r',
                    b'a' => '\x07',
                    b'b' => '\x08',
                    b'f' => '\x0c',
                    b'v' => '\x0b',
                    b'\\' | b'"' | b'\'' => byte as char,
                    b'\n' => {
                        self.line += 1;
                        self.line_start = self.pos;
                        '\n'
                    }
                    b'x' => {
                        let mut code = 0;
                        for _ in 0..2 {
                            let digit = self.peek().and_then(|b| (b as char).to_digit(16));
                            let digit = digit
                                .ok_or_else(|| self.error_at(at, "`\\x` needs two hex digits"))?;
                            code = code * 16 + digit;
                            self.pos += 1;
                        }
                        char::from(code as u8)
                    }
                    b'0'..=b'9' => {
                        let mut code = (byte - b'0') as u32;
                        for _ in 0..2 {
                            match self.peek() {
                                Some(digit @ b'0'..=b'9') => {
                                    code = code * 10 + (digit - b'0') as u32;
                                    self.pos += 1;
                                }
                                _ => break,
                            }
                        }
                        match u8::try_from(code) {
                            Ok(code) => char::from(code),
                            Err(_) => return Err(self.error_at(at, "escape too large")),
                        }
                    }
                    _ => return Err(self.error_at(at, "invalid escape")),
                })
            }

            fn symbol(&mut self) -> Result<Sym, ParseError> {
                let two = |second: u8| self.bytes.get(self.pos + 1) == Some(&second);
                let (sym, len) = match self.bytes[self.pos] {
                    b'=' if two(b'=') => (Sym::Eq, 2),
                    b'~' if two(b'=') => (Sym::Ne, 2),
                    b'<' if two(b'=') => (Sym::Le, 2),
                    b'>' if two(b'=') => (Sym::Ge, 2),
                    b'/' if two(b'/') => (Sym::SlashSlash, 2),
                    b'.' if two(b'.') => (Sym::DotDot, 2),
                    b'=' => (Sym::Assign, 1),
                    b'<' => (Sym::Lt, 1),
                    b'>' => (Sym::Gt, 1),
                    b'/' => (Sym::Slash, 1),
                    b'.' => (Sym::Dot, 1),
                    b'+' => (Sym::Plus, 1),
                    b'-' => (Sym::Minus, 1),
                    b'*' => (Sym::Star, 1),
                    b'%' => (Sym::Percent, 1),
                    b'^' => (Sym::Caret, 1),
                    b'#' => (Sym::Hash, 1),
                    b'(' => (Sym::LParen, 1),
                    b')' => (Sym::RParen, 1),
                    b'{' => (Sym::LBrace, 1),
                    b'}' => (Sym::RBrace, 1),
                    b'[' => (Sym::LBracket, 1),
                    b']' => (Sym::RBracket, 1),
                    b';' => (Sym::Semi, 1),
                    b':' => (Sym::Colon, 1),
                    b',' => (Sym::Comma, 1),
                    _ => {
                        let c = self.src[self.pos..].chars().next().unwrap_or('?');
                        return Err(self.error_at(self.pos, &format!("unexpected character {c:?}")));
                    }
                };
                self.pos += len;
                Ok(sym)
            }

            fn peek(&self) -> Option<u8> {
                self.bytes.get(self.pos).copied()
            }

            fn column(&self) -> u32 {
                (self.pos - self.line_start + 1) as u32
            }

            /// An error at `at`, a byte of the current line.
            fn error_at(&self, at: usize, message: &str) -> ParseError {
                ParseError {
                    line: self.line,
                    column: (at - self.line_start + 1) as u32,
                    message: message.to_string(),
                }
            }
        }
    };
}
