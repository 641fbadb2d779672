// A JVM client for the network suite (tests/net/it/suite.sh, t_java): an HTTP GET with the
// proxy explicitly off (the JVM never reads HTTP_PROXY anyway), so only the sandbox's transparent
// interception can carry it. Prints the status code, or "error: " and the exception's class.
import java.net.HttpURLConnection;
import java.net.Proxy;
import java.net.URL;

public class JavaClient {
    public static void main(String[] args) {
        try {
            URL url = new URL(args[0]);
            HttpURLConnection c = (HttpURLConnection) url.openConnection(Proxy.NO_PROXY);
            c.setConnectTimeout(20000);
            c.setReadTimeout(20000);
            System.out.println(c.getResponseCode());
        } catch (Exception e) {
            System.out.println("error: " + e.getClass().getSimpleName());
        }
    }
}
