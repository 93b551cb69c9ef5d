//! The checker of `lang.rs`: walks a tree, resolving names to locals or
//! globals through a scope stack and folding constant operators, and sums
//! up what it saw.

/// Writes out `check` and its `Checker`, with the attributes given on each
/// function and `impl`.
macro_rules! checker {
    ($(#[$batch:meta])*) => {
        use std::borrow::Cow;
        use std::collections::HashMap;

        /// Walks a chunk: resolves names, folds constants, counts.
        $(#[$batch])*
        pub fn check(chunk: &[Stmt]) -> Summary {
            let mut checker = Checker {
                summary: Summary {
                    names_hash: FNV_START,
                    strings_hash: FNV_START,
                    folded_hash: FNV_START,
                    ..Summary::default()
                },
                declared: Vec::new(),
                live: HashMap::new(),
                depth: 0,
            };
            checker.block(chunk);
            checker.summary
        }

        struct Checker<'a> {
            summary: Summary,
            /// Locals in scope, innermost last.
            declared: Vec<&'a str>,
            /// How many locals in scope have each name.
            live: HashMap<&'a str, u32>,
            /// Blocks open.
            depth: u64,
        }

        $(#[$batch])*
        impl<'a> Checker<'a> {
            fn block(&mut self, block: &'a [Stmt]) {
                self.vec(block);
                self.depth += 1;
                self.summary.max_depth = self.summary.max_depth.max(self.depth);
                let scope = self.declared.len();
                for stmt in block {
                    self.stmt(stmt);
                }
                self.end_scope(scope);
                self.depth -= 1;
            }

            fn stmt(&mut self, stmt: &'a Stmt) {
                self.summary.statements[stmt.kind()] += 1;
                match stmt {
                    Stmt::Local { names, values } => {
                        self.exprs(values);
                        self.vec(names);
                        for name in names {
                            self.declare(name);
                        }
                    }
                    Stmt::Assign { targets, values } => {
                        self.exprs(targets);
                        self.exprs(values);
                    }
                    Stmt::Call(call) => {
                        self.expr(call);
                    }
                    Stmt::LocalFunction { name, func } => {
                        self.declare(name);
                        self.function(func, false);
                    }
                    Stmt::Function { path, method, func } => {
                        self.vec(path);
                        if let Some((first, rest)) = path.split_first() {
                            self.reference(first);
                            for name in rest.iter().chain(method) {
                                self.name(name);
                            }
                        }
                        self.function(func, method.is_some());
                    }
                    Stmt::If { arms, otherwise } => {
                        self.vec(arms);
                        for (cond, body) in arms {
                            self.expr(cond);
                            self.block(body);
                        }
                        if let Some(body) = otherwise {
                            self.block(body);
                        }
                    }
                    Stmt::While { cond, body } => {
                        self.summary.boxes += 1;
                        self.expr(cond);
                        self.block(body);
                    }
                    Stmt::NumericFor(for_) => {
                        self.summary.boxes += 1;
                        self.expr(&for_.start);
                        self.expr(&for_.end);
                        if let Some(step) = &for_.step {
                            self.expr(step);
                        }
                        let scope = self.declared.len();
                        self.declare(&for_.var);
                        self.block(&for_.body);
                        self.end_scope(scope);
                    }
                    Stmt::GenericFor { names, exprs, body } => {
                        self.exprs(exprs);
                        self.vec(names);
                        let scope = self.declared.len();
                        for name in names {
                            self.declare(name);
                        }
                        self.block(body);
                        self.end_scope(scope);
                    }
                    Stmt::Do(body) => self.block(body),
                    Stmt::Break => {}
                    Stmt::Return(values) => self.exprs(values),
                }
            }

            fn function(&mut self, func: &'a Function, method: bool) {
                self.summary.functions += 1;
                self.summary.boxes += 1;
                self.vec(&func.params);
                let scope = self.declared.len();
                if method {
                    self.bind("self");
                }
                for param in &func.params {
                    self.declare(param);
                }
                self.block(&func.body);
                self.end_scope(scope);
            }

            fn exprs(&mut self, exprs: &'a [Expr]) {
                self.vec(exprs);
                for expr in exprs {
                    self.expr(expr);
                }
            }

            fn args(&mut self, args: &'a [Box<Expr>]) {
                self.vec(args);
                self.summary.boxes += args.len() as u64;
                for arg in args {
                    self.expr(arg);
                }
            }

            /// Counts `expr` and what it holds; its value, if it is known
            /// without running the program.
            fn expr(&mut self, expr: &'a Expr) -> Option<Value<'a>> {
                self.summary.expressions[expr.kind()] += 1;
                match expr {
                    Expr::Nil => Some(Value::Nil),
                    Expr::True => Some(Value::Bool(true)),
                    Expr::False => Some(Value::Bool(false)),
                    Expr::Int(n) => Some(Value::Int(*n)),
                    Expr::Float(x) => Some(Value::Float(*x)),
                    Expr::Str(s) => {
                        self.string(s);
                        self.summary.string_bytes += s.len() as u64;
                        fnv(&mut self.summary.strings_hash, s.as_bytes());
                        Some(Value::Str(Cow::Borrowed(s)))
                    }
                    Expr::Name(name) => {
                        self.reference(name);
                        None
                    }
                    Expr::Function(func) => {
                        self.function(func, false);
                        None
                    }
                    Expr::Table(fields) => {
                        self.vec(fields);
                        self.summary.fields += fields.len() as u64;
                        for field in fields {
                            match field {
                                Field::Pos(value) => {
                                    self.expr(value);
                                }
                                Field::Named(name, value) => {
                                    self.name(name);
                                    self.expr(value);
                                }
                                Field::Keyed(key, value) => {
                                    self.summary.boxes += 1;
                                    self.expr(key);
                                    self.expr(value);
                                }
                            }
                        }
                        None
                    }
                    Expr::Unary(op, operand) => {
                        self.summary.boxes += 1;
                        let value = Value::unary(*op, self.expr(operand)?);
                        self.folded(value)
                    }
                    Expr::Binary(op, lhs, rhs) => {
                        self.summary.boxes += 2;
                        let (lhs, rhs) = (self.expr(lhs), self.expr(rhs));
                        let value = Value::binary(*op, lhs?, rhs?);
                        self.folded(value)
                    }
                    Expr::Field(object, name) => {
                        self.summary.boxes += 1;
                        self.expr(object);
                        self.name(name);
                        None
                    }
                    Expr::Index(object, key) => {
                        self.summary.boxes += 2;
                        self.expr(object);
                        self.expr(key);
                        None
                    }
                    Expr::Call(callee, args) => {
                        self.summary.boxes += 1;
                        self.expr(callee);
                        self.args(args);
                        None
                    }
                    Expr::Method(object, name, args) => {
                        self.summary.boxes += 1;
                        self.expr(object);
                        self.name(name);
                        self.args(args);
                        None
                    }
                }
            }

            fn folded(&mut self, value: Option<Value<'a>>) -> Option<Value<'a>> {
                let value = value?;
                self.summary.folded += 1;
                let hash = &mut self.summary.folded_hash;
                match &value {
                    Value::Nil => fnv(hash, b"nil"),
                    Value::Bool(b) => fnv(hash, &[*b as u8]),
                    Value::Int(n) => fnv(hash, &n.to_le_bytes()),
                    Value::Float(x) => fnv(hash, &x.to_bits().to_le_bytes()),
                    Value::Str(s) => fnv(hash, s.as_bytes()),
                }
                Some(value)
            }

            /// A local declared by name in the tree.
            fn declare(&mut self, name: &'a str) {
                self.name(name);
                self.bind(name);
            }

            /// A local in scope from here to the end of the scope.
            fn bind(&mut self, name: &'a str) {
                self.summary.locals += 1;
                self.declared.push(name);
                *self.live.entry(name).or_insert(0) += 1;
            }

            fn end_scope(&mut self, scope: usize) {
                for name in self.declared.drain(scope..) {
                    if let Some(count) = self.live.get_mut(name) {
                        *count -= 1;
                    }
                }
            }

            fn reference(&mut self, name: &str) {
                match self.live.get(name).is_some_and(|&count| count > 0) {
                    true => self.summary.local_refs += 1,
                    false => self.summary.global_refs += 1,
                }
                self.name(name);
            }

            /// A name in the tree.
            fn name(&mut self, name: &str) {
                fnv(&mut self.summary.names_hash, name.as_bytes());
                self.string(name);
            }

            fn string(&mut self, s: &str) {
                self.summary.heap_blocks += !s.is_empty() as u64;
            }

            fn vec<T>(&mut self, v: &[T]) {
                self.summary.heap_blocks += !v.is_empty() as u64;
            }
        }
    };
}
