// Methods annotated one by one, in impl blocks that are not: each
// `/* annotate */` is `#[::batch_alloc::batch_alloc]` in the annotated copy
// (the build script replaces it) and a comment as written. Included in
// both copies after `corpus.rs`, so its names are in scope.

impl Thing {
    /* annotate */
    pub fn alone(&self, a: D) -> usize {
        busy();
        event(format!("alone {} {}", self.name, a.0));
        event(frames());
        self.items.len()
    }

    /* annotate */
    pub fn associated_alone(a: D, b: D) -> usize {
        busy();
        event(format!("associated_alone {}", b.0));
        a.0.len()
    }
}

// An impl block annotated whose method is annotated too: one scope check.
/* annotate */
impl Thing {
    /* annotate */
    pub fn twice(&self, a: D) -> usize {
        busy();
        event(format!("twice {} {}", self.name, a.0));
        self.items.len()
    }
}

/* annotate */
pub fn free_alone(a: D, _b: D) -> usize {
    busy();
    event(format!("free_alone {}", a.0));
    a.0.len()
}

impl Pair {
    /* annotate */
    pub fn show_alone(self, x: D) -> usize {
        busy();
        event(format!("show_alone {:?} {}", self.b, x.0));
        self.b.0.len()
    }

    /* annotate */
    pub async fn show_alone_async(self, x: D) -> usize {
        busy();
        yield_now().await;
        event(format!("show_alone_async {:?} {}", self.b, x.0));
        self.b.0.len()
    }
}

/* annotate */
pub fn counter_alone(offset: usize) -> impl Fn(&str) -> usize {
    busy();
    move |s| s.len() + offset
}

/* annotate */
pub async fn first_word_alone_async() -> impl Fn(&str) -> &str {
    busy();
    yield_now().await;
    |s| s.split(' ').next().unwrap_or("")
}

pub trait LabelAlone {
    fn label_alone(&self) -> &str;
    fn first_word_alone(&self) -> impl Fn(&str) -> &str;
}

impl LabelAlone for Thing {
    /* annotate */
    fn label_alone(&self) -> &'static str {
        busy();
        self.name
    }

    /* annotate */
    fn first_word_alone(&self) -> impl Fn(&str) -> &str {
        busy();
        |s| s.split(' ').next().unwrap_or("")
    }
}
