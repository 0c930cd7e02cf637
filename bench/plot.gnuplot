# Plots for sotls-bench-tls (bench/README.md explains each figure).
#   gnuplot -e "dir='build/bench'" bench/plot.gnuplot
# Reads dir/{bulk,small,handshake,handshake-resumed,memory,streams}.dat, written by
# `sotls-bench-tls --out-dir dir`, and writes dir/tls-*.png (bulk: tls-bulk.png
# for ARIA-GCM, tls-bulk-aes.png for AES-GCM). A missing .dat
# (test not run) just skips its figure.
if (!exists("dir")) dir = "build/bench"
if (!exists("stamp")) stamp = ""

set terminal pngcairo size 1000,560 font "DejaVu Sans,11" noenhanced
set style data histograms
set datafile missing "-"
set style fill solid 0.85 border -1
set boxwidth 0.9 relative
set grid ytics lc rgb "#cccccc"
set key outside bottom center horizontal
set xtics nomirror
set ytics nomirror
set border 3

# Where bar i (1-based) of n sits in a clustered histogram with gap 1.
barx(i, n) = $0 + (i - 1 - (n - 1) / 2.0) / (n + 1.0)
fmt(v) = v >= 100 ? sprintf("%.0f", v) : v >= 10 ? sprintf("%.1f", v) : v >= 1 ? sprintf("%.2f", v) : sprintf("%.3f", v)

have(f) = system(sprintf("test -s '%s' && echo 1 || echo 0", f)) + 0

# --- 1. bulk ------------------------------------------------------------------
f = dir . "/bulk.dat"
if (have(f)) {
  set output dir . "/tls-bulk.png"
  set title "Bulk throughput, one TCP stream over loopback, 16 KiB records (log scale; median of rounds) " . stamp
  set ylabel "Gbit/s (higher is better)"
  set logscale y
  set yrange [0.05:100]
  set style histogram clustered gap 1
  plot f using 2:xtic(1) title "ARIA-128-GCM client->server (tcp: no cipher)" lc rgb "#1f77b4", \
       '' using 3 title "ARIA-128-GCM server->client (tcp: no cipher)" lc rgb "#6baed6", \
       '' using 4 title "ARIA-256-GCM client->server" lc rgb "#d62728", \
       '' using 5 title "ARIA-256-GCM server->client" lc rgb "#ff9896", \
       '' using (barx(1,4)):($2*1.15):(fmt($2)) with labels font ",8" notitle, \
       '' using (barx(2,4)):($3*1.15):(fmt($3)) with labels font ",8" notitle, \
       '' using (barx(3,4)):($4*1.15):(fmt($4)) with labels font ",8" notitle, \
       '' using (barx(4,4)):($5*1.15):(fmt($5)) with labels font ",8" notitle
  unset logscale y
  set yrange [*:*]
  # The same for AES-GCM (bulk.dat columns 6-9), in its own figure.
  set output dir . "/tls-bulk-aes.png"
  set title "Bulk throughput, AES-GCM, one TCP stream over loopback, 16 KiB records (log scale; median of rounds) " . stamp
  set logscale y
  set yrange [0.05:100]
  plot f using 6:xtic(1) title "AES-128-GCM client->server (tcp: no cipher)" lc rgb "#2ca02c", \
       '' using 7 title "AES-128-GCM server->client (tcp: no cipher)" lc rgb "#98df8a", \
       '' using 8 title "AES-256-GCM client->server" lc rgb "#9467bd", \
       '' using 9 title "AES-256-GCM server->client" lc rgb "#c5b0d5", \
       '' using (barx(1,4)):($6*1.15):(fmt($6)) with labels font ",8" notitle, \
       '' using (barx(2,4)):($7*1.15):(fmt($7)) with labels font ",8" notitle, \
       '' using (barx(3,4)):($8*1.15):(fmt($8)) with labels font ",8" notitle, \
       '' using (barx(4,4)):($9*1.15):(fmt($9)) with labels font ",8" notitle
  unset logscale y
  set yrange [*:*]
}

# --- 2. small messages --------------------------------------------------------
f = dir . "/small.dat"
if (have(f)) {
  set output dir . "/tls-small.png"
  set title "Request/response echo, one connection, ARIA-128-GCM (round trips per second) " . stamp
  set ylabel "round trips / s (higher is better)"
  set yrange [0:*]
  set style histogram clustered gap 1
  plot f using 2:xtic(1) title "64-byte messages" lc rgb "#2ca02c", \
       '' using 3 title "1500-byte messages" lc rgb "#9467bd", \
       '' using (barx(1,2)):($2):(sprintf("%.0f", $2)) with labels offset 0,0.7 font ",9" notitle, \
       '' using (barx(2,2)):($3):(sprintf("%.0f", $3)) with labels offset 0,0.7 font ",9" notitle
}

# --- 3. handshakes ------------------------------------------------------------
f = dir . "/handshake.dat"
if (have(f)) {
  set output dir . "/tls-handshake.png"
  set title "Full TLS 1.2 handshakes per second (client and server in one process, 2 threads) " . stamp
  set ylabel "handshakes / s (higher is better)"
  set yrange [0:*]
  set style histogram clustered gap 1
  plot f using 2:xtic(1) title "ECDHE-ECDSA, P-256 certificate" lc rgb "#8c564b", \
       '' using 3 title "ECDHE-RSA, RSA-2048 certificate" lc rgb "#e377c2", \
       '' using (barx(1,2)):($2):(sprintf("%.0f", $2)) with labels offset 0,0.7 font ",9" notitle, \
       '' using (barx(2,2)):($3):(sprintf("%.0f", $3)) with labels offset 0,0.7 font ",9" notitle
}

# --- 3b. resumed handshakes ---------------------------------------------------
f = dir . "/handshake-resumed.dat"
if (have(f)) {
  set output dir . "/tls-handshake-resumed.png"
  set title "TLS 1.2 handshakes per second: full vs resumed (log scale) " . stamp
  set ylabel "handshakes / s (higher is better)"
  set logscale y
  set yrange [10:*]
  set style histogram clustered gap 1
  plot f using 2:xtic(1) title "ECDSA full" lc rgb "#8c564b", \
       '' using 3 title "ECDSA session ID" lc rgb "#c49c94", \
       '' using 4 title "ECDSA ticket" lc rgb "#e7cbc5", \
       '' using 5 title "RSA full" lc rgb "#e377c2", \
       '' using 6 title "RSA session ID" lc rgb "#f7b6d2", \
       '' using 7 title "RSA ticket" lc rgb "#fbe0ec", \
       '' using (barx(1,6)):($2*1.15):(fmt($2)) with labels font ",7" notitle, \
       '' using (barx(2,6)):($3*1.15):(fmt($3)) with labels font ",7" notitle, \
       '' using (barx(3,6)):($4*1.15):(fmt($4)) with labels font ",7" notitle, \
       '' using (barx(4,6)):($5*1.15):(fmt($5)) with labels font ",7" notitle, \
       '' using (barx(5,6)):($6*1.15):(fmt($6)) with labels font ",7" notitle, \
       '' using (barx(6,6)):($7*1.15):(fmt($7)) with labels font ",7" notitle
  unset logscale y
  set yrange [*:*]
}

# --- 4. memory ----------------------------------------------------------------
f = dir . "/memory.dat"
if (have(f)) {
  set output dir . "/tls-memory.png"
  set title "Memory per idle established connection (heap: mallinfo2 delta / N) " . stamp
  set ylabel "KiB per connection (lower is better)"
  set yrange [0:*]
  set style histogram clustered gap 1
  plot f using 2:xtic(1) title "client heap" lc rgb "#17becf", \
       '' using 3 title "server heap" lc rgb "#9edae5", \
       '' using 4 title "client RSS" lc rgb "#bcbd22", \
       '' using 5 title "server RSS" lc rgb "#dbdb8d", \
       '' using (barx(1,4)):($2):(sprintf("%.1f", $2)) with labels offset 0,0.7 font ",8" notitle, \
       '' using (barx(2,4)):($3):(sprintf("%.1f", $3)) with labels offset 0,0.7 font ",8" notitle, \
       '' using (barx(3,4)):($4):(sprintf("%.1f", $4)) with labels offset 0,0.7 font ",8" notitle, \
       '' using (barx(4,4)):($5):(sprintf("%.1f", $5)) with labels offset 0,0.7 font ",8" notitle
}

# --- 5. two streams -----------------------------------------------------------
f = dir . "/streams.dat"
if (have(f)) {
  set output dir . "/tls-streams.png"
  set title "One stream vs two streams at once (aggregate), ARIA-128-GCM client->server (log scale) " . stamp
  set ylabel "Gbit/s (higher is better)"
  set logscale y
  set yrange [0.05:100]
  set style histogram clustered gap 1
  plot f using 2:xtic(1) title "one stream" lc rgb "#7f7f7f", \
       '' using 3 title "two streams, aggregate" lc rgb "#ff7f0e", \
       '' using (barx(1,2)):($2*1.15):(fmt($2)) with labels font ",9" notitle, \
       '' using (barx(2,2)):($3*1.15):(fmt($3)) with labels font ",9" notitle
  unset logscale y
}
