<?php
// /sleep.php?ms=N: sleeps N ms (0..60000), then a fixed 6-byte body.
$ms = isset($_GET['ms']) ? max(0, min(60000, (int) $_GET['ms'])) : 0;
if ($ms > 0) {
    usleep($ms * 1000);
}
header('Content-Type: text/plain');
echo "slept\n";
