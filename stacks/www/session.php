<?php
// /session.php?ms=N: file-backed session (save_path is set per stack by the
// server config), held open for N ms. PHP's files handler keeps an flock on
// the session file until the script ends, so requests sharing one PHPSESSID
// cookie run one after another. Body: the session id and a newline.
session_start();
$ms = isset($_GET['ms']) ? max(0, min(60000, (int) $_GET['ms'])) : 0;
if ($ms > 0) {
    usleep($ms * 1000);
}
$_SESSION['hits'] = ($_SESSION['hits'] ?? 0) + 1;
header('Content-Type: text/plain');
echo session_id(), "\n";
