package com.supermarket.loadclient.run;

/** How the run reports progress on stderr. */
enum ProgressMode {
    /** A bar redrawn in place when stderr is a terminal, otherwise {@link #LINES}. */
    AUTO,
    /** A bar redrawn in place every second. */
    BAR,
    /** One plain line every ten seconds, for logs and CI. */
    LINES,
    /** Nothing. */
    OFF
}
