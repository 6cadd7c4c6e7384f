<?php
// POST /echo.php: the request body back, as text (FastCGI's stdin reached
// PHP). Any other method: the method's name.
header('Content-Type: text/plain');
if ($_SERVER['REQUEST_METHOD'] === 'POST') {
    echo file_get_contents('php://input');
} else {
    echo $_SERVER['REQUEST_METHOD'], "\n";
}
