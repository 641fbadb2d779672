// A JVM client for the network suite (tests/net/it/suite.sh, t_java): a plain java.net.Socket
// (as JDBC drivers and other JVM clients use; the JVM never reads HTTP_PROXY) sends one HTTP/1.0
// GET, so only the sandbox's transparent interception can carry it. One connection, no retry
// (HttpURLConnection may retry a reset GET, which would be a second refusal). Prints the status
// code, or "error: " and the exception's class.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

public class JavaClient {
    public static void main(String[] args) {
        String host = args[0], path = args[2];
        int port = Integer.parseInt(args[1]);
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(host, port), 20000);
            s.setSoTimeout(20000);
            OutputStream out = s.getOutputStream();
            out.write(("GET " + path + " HTTP/1.0\r\nHost: " + host + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            BufferedReader in = new BufferedReader(
                    new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
            String status = in.readLine();
            if (status == null)
                throw new java.io.EOFException();
            System.out.println(status.split(" ")[1]);
        } catch (Exception e) {
            System.out.println("error: " + e.getClass().getSimpleName());
        }
    }
}
