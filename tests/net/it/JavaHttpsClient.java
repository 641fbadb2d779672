// A JVM HTTPS client for the network suite (tests/net/it/rules.sh, t_rules_tls_java):
// HttpsURLConnection with the JVM's default trust (its cacerts file; Java ignores SSL_CERT_FILE
// and every other variable cordon sets), one GET or POST. Prints "status N" (a 403 too: it is a
// response, not an exception), or "error: " and the exception's class, so a failed verification
// shows as SSLHandshakeException.
//
//   java JavaHttpsClient.java GET|POST URL
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URL;
import javax.net.ssl.HttpsURLConnection;

public class JavaHttpsClient {
    public static void main(String[] args) {
        try {
            HttpsURLConnection c = (HttpsURLConnection) new URL(args[1]).openConnection();
            c.setConnectTimeout(20000);
            c.setReadTimeout(20000);
            c.setRequestMethod(args[0]);
            if (args[0].equals("POST")) {
                c.setDoOutput(true);
                try (OutputStream out = c.getOutputStream()) {
                    out.write('x');
                }
            }
            int status = c.getResponseCode();
            InputStream body = status < 400 ? c.getInputStream() : c.getErrorStream();
            if (body != null)
                body.readAllBytes();
            System.out.println("status " + status);
        } catch (Exception e) {
            System.out.println("error: " + e.getClass().getSimpleName());
        }
    }
}
